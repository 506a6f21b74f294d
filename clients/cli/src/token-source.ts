import { readFile } from 'node:fs/promises';
import { UsageError } from './usage-error.ts';

/**
 * Where the bearer token comes from: `--token-file PATH` (else `CHAT_TOKEN_FILE`) or the
 * `CHAT_TOKEN` environment variable, never a flag value (any user on the machine can read another's command line in `ps`). The file
 * is read again on every request for a token, so a tail whose token is refused (it expired, or the
 * service restarted) or that gets `reauthorize` picks up the token the file holds by then.
 */
export function tokenProvider(input: { tokenFile: string | undefined; env: NodeJS.ProcessEnv }): () => Promise<string> {
  const path = input.tokenFile ?? (input.env.CHAT_TOKEN_FILE || undefined);
  if (path !== undefined) {
    return async () => {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (err) {
        throw new UsageError(`cannot read the token file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`);
      }
      return bareToken(text, `the token file ${path}`);
    };
  }
  const fromEnv = input.env.CHAT_TOKEN;
  if (fromEnv === undefined || fromEnv.trim() === '') {
    throw new UsageError('no token: pass --token-file PATH (or set CHAT_TOKEN_FILE), or set CHAT_TOKEN');
  }
  const token = bareToken(fromEnv, 'CHAT_TOKEN');
  return async () => token;
}

/**
 * The bare token of a file's or variable's text. A token never holds whitespace, so `Bearer <token>`
 * (a pasted header value) is read as its token; any other whitespace inside is most likely two tokens
 * or another kind of header, and refused.
 */
export function bareToken(text: string, source: string): string {
  const trimmed = text.trim();
  const token = /^Bearer +(\S+)$/i.exec(trimmed)?.[1] ?? trimmed;
  if (token === '') throw new UsageError(`${source} is empty`);
  if (/\s/.test(token)) throw new UsageError(`${source} holds whitespace inside the token; it takes the bare token`);
  return token;
}
