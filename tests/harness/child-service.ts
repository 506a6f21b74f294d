import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { testConfig } from './test-config.ts';

/**
 * The folder of this mocha run's logs (`tests/.logs/<run-id>/`): every child's full output goes to a
 * file there and every minted token to `minted-tokens.txt`, so `zz-no-secrets-in-logs.test.ts` can
 * look for the tokens in the logs (reliability test 17). One mocha process = one run: the ID is fixed
 * when this module is first loaded.
 */
export const RUN_LOG_DIR = join(testConfig.repoRoot, 'tests', '.logs', `${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}`);

/** The file listing every token minted during this run, one per line. */
export const MINTED_TOKENS_FILE = join(RUN_LOG_DIR, 'minted-tokens.txt');

let runLogDirMade = false;
function ensureRunLogDir(): void {
  if (runLogDirMade) return;
  mkdirSync(RUN_LOG_DIR, { recursive: true });
  runLogDirMade = true;
}

/** Records a token minted by a test, for the end-of-run search of the logs. */
export function recordMintedToken(token: string): void {
  ensureRunLogDir();
  appendFileSync(MINTED_TOKENS_FILE, `${token}\n`);
}

let logFileSerial = 0;
/** Opens this run's log file for one child process (names made file-safe, numbered so none collide). */
function openRunLogFile(name: string): { fd: number; path: string } {
  ensureRunLogDir();
  const path = join(RUN_LOG_DIR, `${String(++logFileSerial).padStart(4, '0')}-${name.replace(/[^A-Za-z0-9_-]+/g, '_')}.log`);
  return { fd: openSync(path, 'a'), path };
}

/** Environment variables of the services that a test run must never inherit by accident. */
const SERVICE_ENV_KEYS = [
  'PORT', 'HOST', 'DEV_CORE_PORT', 'DEV_CORE_HOST', 'DEV_CORE_FIXTURE', 'DEV_CORE_PUBLIC_URL', 'DATA_DIR',
  'DATABASE_URL', 'REDIS_URL', 'REDIS_MODE', 'REDIS_SEED_NODES', 'REDIS_SENTINEL_NAME', 'CORE_URL', 'CURSOR_SECRET', 'CURSOR_SECRETS_PREVIOUS', 'APPEND_RATE_LIMIT',
  'APPEND_RATE_WINDOW_SECONDS', 'CORE_TIMEOUT_MS', 'CORE_AUTHORIZATIONS_PER_PRINCIPAL', 'LOG_LEVEL', 'PRINT_DEMO_TOKENS', 'CHAT_DEVELOPMENT_MODE', 'ADMIN_HOST',
  'CORE_SERVICE_TOKEN', 'HTTP_HEADERS_TIMEOUT_MS', 'HTTP_REQUEST_TIMEOUT_MS', 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 'HTTP_MAX_CONNECTIONS',
];

const running = new Set<ChildProcess>();

// The last line of defence: mocha exits with `exit: true`, so whatever an `after` hook missed dies here.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export interface ChildServiceOptions {
  /** Name used in error messages. */
  name: string;
  /** Entry point relative to the repository root (or to `compiled.cwd`). */
  script: string;
  env: Record<string, string>;
  /**
   * Runs a compiled build instead: `node <script>` in `cwd`, with no loader and no source
   * condition, exactly as the production image runs it.
   */
  compiled?: { cwd: string };
}

/**
 * A service started as `node --import tsx --conditions=@chat/source <script>` (workspace packages
 * resolve to their TypeScript sources), or as plain `node <script>` for a compiled build, with its
 * output kept for diagnostics.
 */
export class ChildService {
  readonly process: ChildProcess;
  private output = '';
  private exited = false;
  /** Where the full output of this process is written (under RUN_LOG_DIR). */
  readonly logFile: string;

  constructor(private readonly options: ChildServiceOptions) {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const key of SERVICE_ENV_KEYS) delete env[key];
    const loader = options.compiled ? [] : ['--import', 'tsx', '--conditions=@chat/source'];
    this.process = spawn(process.execPath, [...(process.env.CHILD_NODE_FLAGS ? process.env.CHILD_NODE_FLAGS.split(' ') : []), ...loader, options.script], {
      cwd: options.compiled?.cwd ?? testConfig.repoRoot,
      env: { ...env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(this.process);
    const file = openRunLogFile(options.name);
    this.logFile = file.path;
    let fd: number | undefined = file.fd;
    const keep = (chunk: Buffer) => {
      // Bounded: only the tail matters when a start fails.
      this.output = (this.output + chunk.toString('utf8')).slice(-64 * 1024);
      // Synchronous, so the file is complete whenever a test reads it, even while the process still runs.
      if (fd !== undefined) writeSync(fd, chunk);
    };
    this.process.stdout!.on('data', keep);
    this.process.stderr!.on('data', keep);
    this.process.once('exit', () => {
      this.exited = true;
      running.delete(this.process);
    });
    // 'close' comes after the last output chunk, so nothing is written after the file is closed.
    this.process.once('close', () => {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    });
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  get hasExited(): boolean {
    return this.exited;
  }

  /** The last output of the process, for failure messages. */
  get log(): string {
    return this.output;
  }

  /** Waits until the output matches `pattern`, failing if the process exits or the time runs out. */
  async waitForOutput(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = pattern.exec(this.output);
      if (match) return match;
      if (this.exited) throw new Error(`${this.options.name} exited before printing ${pattern}:\n${this.output}`);
      if (Date.now() > deadline) throw new Error(`${this.options.name} did not print ${pattern} within ${timeoutMs} ms:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Polls `probe` every `intervalMs` until it resolves true, failing early if the process dies. */
  async waitUntil(probe: () => Promise<boolean>, timeoutMs = 60_000, intervalMs = 100): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.exited) throw new Error(`${this.options.name} exited during start:\n${this.output}`);
      if (await probe().catch(() => false)) return;
      if (Date.now() > deadline) throw new Error(`${this.options.name} not ready within ${timeoutMs} ms:\n${this.output}`);
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }

  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. Safe to call twice. */
  async stop(graceMs = 5000): Promise<void> {
    if (this.exited) return;
    const exited = once(this.process, 'exit');
    this.process.kill('SIGTERM');
    const timer = setTimeout(() => this.process.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
}
