/**
 * `pnpm dev-token <user|bot> [ID]`: mints development tokens from the running dev-core (`pnpm start`'s,
 * or `pnpm dev-core`) at `CHAT_CORE_URL`. For a person, the chat token and the core resource token
 * that person's mentions need; for a bot, its chat token. Printed as shell lines with a comment
 * saying what each is (`eval "$(pnpm --silent token user)"` sets them), or with `--out DIR` written
 * to files only the owner reads, printed as the CLI flags that take them. Tokens are bare: the
 * clients add `Bearer `.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfigOrExit } from '@chat/service-config';
import { loadTokenConfig } from './token-config.ts';

const USAGE = `usage: pnpm dev-token <user|bot> [ID] [--out DIR] [--expires SECONDS]

  user [ID]   a person's chat token and core resource token (default ID u_alice)
  bot [ID]    a bot's chat token, for its first active credential (default ID b_ci)
  --out DIR   write the tokens to files in DIR (mode 0600) and print the flags that read them
  --expires   lifetime in seconds (default 3600)

Asks the development core at CHAT_CORE_URL (default http://127.0.0.1:8081).`;

class UsageError extends Error {}

interface Minted {
  /** What the token is for, as the comment before it says. */
  label: string;
  token: string;
  /** The variable and the file flag the chat CLI reads it from. */
  variable: 'CHAT_TOKEN' | 'CHAT_CORE_TOKEN';
  flag: '--token-file' | '--core-token-file';
  fileSuffix: string;
}

async function mint(coreUrl: string, request: Record<string, unknown>): Promise<string> {
  let response: Response;
  try {
    response = await fetch(`${coreUrl}/dev/tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) });
  } catch (err) {
    throw new Error(`no development core answers at ${coreUrl} (CHAT_CORE_URL): start it with \`pnpm start\` or \`pnpm dev-core\`, or set CHAT_CORE_URL to where it listens (${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message})`);
  }
  const body = (await response.json().catch(() => ({}))) as { token?: string; error?: { message?: string } };
  if (!response.ok || typeof body.token !== 'string') throw new Error(`the development core at ${coreUrl} refused the token (${response.status}${body.error?.message ? `: ${body.error.message}` : ''})`);
  return body.token;
}

function parse(argv: string[]): { kind: 'user' | 'bot'; id: string; out: string | undefined; expires: number } {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: { out: { type: 'string' }, expires: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const [kind, id, ...rest] = positionals;
  if (kind !== 'user' && kind !== 'bot') throw new UsageError(kind === undefined ? 'say which token: user or bot' : `unknown kind ${kind}: user or bot`);
  if (rest.length > 0) throw new UsageError(`unexpected ${rest.join(' ')}`);
  const expires = values.expires === undefined ? 3600 : Number(values.expires);
  if (!Number.isInteger(expires) || expires <= 0) throw new UsageError('--expires takes a whole number of seconds');
  return { kind, id: id ?? (kind === 'user' ? 'u_alice' : 'b_ci'), out: values.out, expires };
}

async function mintAll(coreUrl: string, kind: 'user' | 'bot', id: string, expires: number): Promise<Minted[]> {
  if (kind === 'bot') {
    const token = await mint(coreUrl, { type: 'bot', subjectId: id, expiresInSeconds: expires });
    return [{ label: `chat token of bot ${id}`, token, variable: 'CHAT_TOKEN', flag: '--token-file', fileSuffix: '' }];
  }
  const chat = await mint(coreUrl, { type: 'human', subjectId: id, expiresInSeconds: expires });
  const core = await mint(coreUrl, { type: 'core_resource', subjectId: id, expiresInSeconds: expires });
  return [
    { label: `chat token of ${id}`, token: chat, variable: 'CHAT_TOKEN', flag: '--token-file', fileSuffix: '' },
    { label: `core resource token of ${id}, which a mention by ${id} needs`, token: core, variable: 'CHAT_CORE_TOKEN', flag: '--core-token-file', fileSuffix: '-core' },
  ];
}

async function run(argv: string[]): Promise<void> {
  const config = loadConfigOrExit(() => loadTokenConfig(process.env));
  const { kind, id, out, expires } = parse(argv);
  const minted = await mintAll(config.coreUrl, kind, id, expires);
  const lines = [`# ${kind === 'user' ? 'person' : 'bot'} ${id}, valid ${expires} s, from the development core at ${config.coreUrl}`];
  if (out === undefined) {
    for (const m of minted) lines.push(`# ${m.label} (the CLI reads ${m.variable}, or a file holding it with ${m.flag}):`, `export ${m.variable}=${m.token}`);
  } else {
    const dir = resolve(out);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const flags: string[] = [];
    for (const m of minted) {
      const file = join(dir, `${id}${m.fileSuffix}.token`);
      await writeFile(file, `${m.token}\n`, { mode: 0o600 });
      // An existing file keeps its mode on write: make sure it is the owner's only.
      await chmod(file, 0o600);
      lines.push(`# ${m.label}: ${file} (the CLI's ${m.flag})`);
      flags.push(`${m.flag} ${file}`);
    }
    lines.push(flags.join(' '));
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

run(process.argv.slice(2)).catch((err: unknown) => {
  const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  process.stderr.write(`token: ${(err as Error).message}\n${usage ? `${USAGE}\n` : ''}`);
  process.exit(usage ? 2 : 1);
});
