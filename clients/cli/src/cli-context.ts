import { ChatClient, ChatInsecureTransportError, ULID_PATTERN, type RoomRef } from '@chat/client';
import type { CliIo } from './cli-io.ts';
import { Printer } from './output/printer.ts';
import { tokenProvider } from './token-source.ts';
import { UsageError } from './usage-error.ts';

/** The options every command takes (see `addConnectionOptions`). */
export interface ConnectionOptions {
  url?: string;
  tokenFile?: string;
  repository?: string;
  branch?: string;
  json?: boolean;
  allowInsecureHttp?: boolean;
  /** Never accepted: declared only to refuse it with a clear message. */
  token?: string;
}

/** What every command works with: a client and the printer. */
export interface ClientContext {
  client: ChatClient;
  baseUrl: string;
  printer: Printer;
  io: CliIo;
}

/** What a command on one room or inbox works with: the client, the room or inbox it names and the printer. */
export interface CliContext extends ClientContext {
  repositoryId: string;
  room: RoomRef;
}

/** Default service URL when neither `--url` nor `CHAT_URL` is given. @defaultValue 'http://127.0.0.1:8080' */
export const DEFAULT_URL = 'http://127.0.0.1:8080';

function serviceUrl(options: ConnectionOptions, env: NodeJS.ProcessEnv): string {
  const raw = options.url ?? env.CHAT_URL ?? DEFAULT_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`the service URL ${JSON.stringify(raw)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`the service URL must be http or https, not ${url.protocol}`);
  // A token belongs in the header; one in the URL would show in ps and in logs.
  if (url.username || url.password) throw new UsageError('the service URL must not hold credentials');
  return url.href.replace(/\/$/, '');
}

function canonicalUlid(value: string, flag: string): string {
  if (!ULID_PATTERN.test(value)) throw new UsageError(`${flag} must be a canonical ULID (26 characters of Crockford base32, upper case), not ${JSON.stringify(value)}`);
  return value;
}

/**
 * Checks the options and the token and builds the context of a command on one room or inbox; every
 * mistake is a UsageError (exit code 2).
 */
export async function createContext(options: ConnectionOptions, io: CliIo): Promise<CliContext> {
  refuseTokenFlag(options);
  const repository = options.repository ?? io.env.CHAT_REPOSITORY;
  if (repository === undefined) throw new UsageError('no repository: pass --repository ULID (or set CHAT_REPOSITORY)');
  const repositoryId = canonicalUlid(repository, '--repository');
  const branchId = options.branch === undefined ? undefined : canonicalUlid(options.branch, '--branch');
  return { ...(await createClientContext(options, io)), repositoryId, room: branchId ? { repositoryId, branchId } : { repositoryId } };
}

/** The context of a command that names no repository (the caller's feed across all of them). */
export async function createClientContext(options: ConnectionOptions, io: CliIo): Promise<ClientContext> {
  refuseTokenFlag(options);
  const baseUrl = serviceUrl(options, io.env);
  const token = tokenProvider({ tokenFile: options.tokenFile, env: io.env });
  // Read once now, so a missing or empty token is a usage error before anything is sent.
  await token();
  const allowInsecureHttp = options.allowInsecureHttp === true || io.env.CHAT_ALLOW_INSECURE_HTTP === '1';
  let client: ChatClient;
  try {
    client = new ChatClient({ baseUrl, token: () => token(), allowInsecureHttp });
  } catch (err) {
    if (!(err instanceof ChatInsecureTransportError)) throw err;
    throw new UsageError(
      `refusing to send the token over plain http to ${baseUrl}, which is not a loopback address: use https, or pass --allow-insecure-http (or set CHAT_ALLOW_INSECURE_HTTP=1) on a network you trust`,
    );
  }
  return { client, baseUrl, printer: new Printer(io, { json: options.json === true }), io };
}

function refuseTokenFlag(options: ConnectionOptions): void {
  if (options.token !== undefined) {
    throw new UsageError('--token is not accepted: a flag value shows in ps; pass --token-file PATH (or set CHAT_TOKEN_FILE), or set CHAT_TOKEN');
  }
}
