import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.ts';
import { testConfig } from './test-config.ts';

/** Where Debian's package puts the binary (`/usr/sbin` is not on every user's PATH). */
const DEBIAN_BINARY = '/usr/sbin/pgbouncer';

export interface PgBouncerOptions {
  /** Server connections per (database, user) pair: `default_pool_size`. */
  serverPoolSize: number;
  /** Client connections PgBouncer accepts: `max_client_conn`. @defaultValue 200 */
  maxClientConnections?: number;
  /** How long a client may wait for a server connection before PgBouncer fails it: `query_wait_timeout`. @defaultValue 30 */
  queryWaitTimeoutSeconds?: number;
}

/** A private PgBouncer in transaction pooling mode in front of the test PostgreSQL. */
export interface PgBouncerProcess {
  port: number;
  /** `databaseUrl` (a URL of the test PostgreSQL) with PgBouncer's host and port. */
  urlFor(databaseUrl: string): string;
  /** Rows of the admin console's `SHOW <what>` (POOLS, SERVERS, CLIENTS, STATS...). */
  show(what: string): Promise<Array<Record<string, unknown>>>;
  /** Everything PgBouncer logged (it logs to stderr). */
  readonly log: string;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** The PgBouncer binary, or undefined when it is not installed (`.ci/run` installs Debian's package). */
export function pgBouncerBinary(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v pgbouncer'], { encoding: 'utf8' }).stdout.trim();
  if (found) return found;
  return existsSync(DEBIAN_BINARY) ? DEBIAN_BINARY : undefined;
}

/**
 * Starts PgBouncer on a free loopback port with a configuration generated in a temporary folder:
 * `pool_mode = transaction`, trust authentication for the test user, every database name forwarded
 * to the test PostgreSQL. Never the system service. PgBouncer refuses to run as root, so under root
 * it runs as the `postgres` user (which Debian's PostgreSQL and PgBouncer packages create).
 */
export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncerProcess> {
  const binary = pgBouncerBinary();
  if (!binary) throw new Error('pgbouncer is not installed: apt-get install -y pgbouncer (.ci/run installs it)');
  const server = new URL(testConfig.databaseUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'chat-pgbouncer-'));
  const config = join(dir, 'pgbouncer.ini');
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" ""\n`);
  writeFileSync(
    config,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${options.serverPoolSize}`,
      'min_pool_size = 0',
      'reserve_pool_size = 0',
      `max_client_conn = ${options.maxClientConnections ?? 200}`,
      // A client waiting longer than this for a server connection gets an error (SQLSTATE 08P01),
      // which the service answers as 503 STORE_UNAVAILABLE.
      `query_wait_timeout = ${options.queryWaitTimeoutSeconds ?? 30}`,
      `admin_users = ${user}`,
      `stats_users = ${user}`,
      'log_connections = 0',
      'log_disconnections = 0',
      '',
    ].join('\n'),
  );
  const owner = process.getuid?.() === 0 ? systemUser('postgres') : undefined;
  if (owner) for (const path of [dir, config, join(dir, 'userlist.txt')]) chownSync(path, owner.uid, owner.gid);
  const child = spawn(binary, [config], { stdio: ['ignore', 'ignore', 'pipe'], ...(owner ?? {}) });
  running.add(child);
  let log = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
  const exited = once(child, 'exit');
  child.once('exit', () => running.delete(child));

  const show = async (what: string) => {
    const admin = new pg.Client({ host: '127.0.0.1', port, user, database: 'pgbouncer' });
    await admin.connect();
    try {
      // The admin console speaks the simple query protocol only: no parameters.
      return (await admin.query(`SHOW ${what.replace(/[^A-Za-z_]/g, '')}`)).rows as Array<Record<string, unknown>>;
    } finally {
      await admin.end();
    }
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      // SIGTERM: immediate shutdown, client and server connections closed.
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`pgbouncer exited with ${child.exitCode}: ${log}`);
    }
    try {
      await show('VERSION');
      break;
    } catch (err) {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`pgbouncer did not accept connections within 15 s: ${String(err)}\n${log}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    port,
    urlFor(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    show,
    get log() {
      return log;
    },
    stop,
  };
}

function systemUser(name: string): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  if (!line) throw new Error(`pgbouncer refuses to run as root and there is no '${name}' user to run it as`);
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}
