import { readFile } from 'node:fs/promises';
import { UsageError } from './usage-error.ts';

/**
 * Where the bearer token comes from: `--token-file PATH` or the `CHAT_TOKEN` environment variable,
 * never a flag value (any user on the machine can read another's command line in `ps`). The file
 * is read again on every request for a token, so a tail that gets `reauthorize` picks up a token
 * the file has been refreshed with meanwhile.
 */
export function tokenProvider(input: { tokenFile: string | undefined; env: NodeJS.ProcessEnv }): () => Promise<string> {
  if (input.tokenFile !== undefined) {
    const path = input.tokenFile;
    return async () => {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (err) {
        throw new UsageError(`cannot read the token file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`);
      }
      return checked(text.trim(), `the token file ${path}`);
    };
  }
  const fromEnv = input.env.CHAT_TOKEN;
  if (fromEnv === undefined || fromEnv.trim() === '') {
    throw new UsageError('no token: set CHAT_TOKEN or pass --token-file PATH');
  }
  const token = checked(fromEnv.trim(), 'CHAT_TOKEN');
  return async () => token;
}

function checked(token: string, source: string): string {
  if (token === '') throw new UsageError(`${source} is empty`);
  // A token never holds whitespace; one that does is most likely two tokens or a pasted header.
  if (/\s/.test(token)) throw new UsageError(`${source} holds whitespace inside the token`);
  return token;
}
