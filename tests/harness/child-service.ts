import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { testConfig } from './test-config.ts';

/** Environment variables of the services that a test run must never inherit by accident. */
const SERVICE_ENV_KEYS = [
  'PORT', 'HOST', 'DEV_CORE_PORT', 'DEV_CORE_HOST', 'DEV_CORE_FIXTURE', 'DEV_CORE_PUBLIC_URL', 'DATA_DIR',
  'DATABASE_URL', 'REDIS_URL', 'CORE_URL', 'CURSOR_SECRET', 'CURSOR_SECRETS_PREVIOUS', 'APPEND_RATE_LIMIT',
  'APPEND_RATE_WINDOW_SECONDS', 'CORE_TIMEOUT_MS', 'LOG_LEVEL', 'PRINT_DEMO_TOKENS',
];

const running = new Set<ChildProcess>();

// The last line of defence: mocha exits with `exit: true`, so whatever an `after` hook missed dies here.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export interface ChildServiceOptions {
  /** Name used in error messages. */
  name: string;
  /** Entry point relative to the repository root. */
  script: string;
  env: Record<string, string>;
}

/** A service started as `node --import tsx <script>`, with its output kept for diagnostics. */
export class ChildService {
  readonly process: ChildProcess;
  private output = '';
  private exited = false;

  constructor(private readonly options: ChildServiceOptions) {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const key of SERVICE_ENV_KEYS) delete env[key];
    this.process = spawn(process.execPath, [...(process.env.CHILD_NODE_FLAGS ? process.env.CHILD_NODE_FLAGS.split(' ') : []), '--import', 'tsx', options.script], {
      cwd: testConfig.repoRoot,
      env: { ...env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(this.process);
    const keep = (chunk: Buffer) => {
      // Bounded: only the tail matters when a start fails.
      this.output = (this.output + chunk.toString('utf8')).slice(-64 * 1024);
    };
    this.process.stdout!.on('data', keep);
    this.process.stderr!.on('data', keep);
    this.process.once('exit', () => {
      this.exited = true;
      running.delete(this.process);
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

  /** Polls `probe` until it resolves true, failing early if the process dies. */
  async waitUntil(probe: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.exited) throw new Error(`${this.options.name} exited during start:\n${this.output}`);
      if (await probe().catch(() => false)) return;
      if (Date.now() > deadline) throw new Error(`${this.options.name} not ready within ${timeoutMs} ms:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 100));
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
