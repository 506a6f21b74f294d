import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { testConfig } from '../harness/test-config.ts';

/** The built `chat` command (clients/cli/bin/chat.js loads clients/cli/dist). */
export const CHAT_BIN = join(testConfig.repoRoot, 'clients/cli/bin/chat.js');

export interface ChatRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface ChatRunOptions {
  /** The CLI's whole environment besides PATH and HOME: the parent's CHAT_* never leak in. */
  env?: Record<string, string>;
  /** Written to stdin, which is then closed (stdin is /dev/null when absent). */
  input?: string;
  /** Killed with SIGKILL beyond this (a hung command fails the test instead of hanging it). @defaultValue 60000 */
  timeoutMs?: number;
}

function childEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env };
}

/** Every output a test has seen from the CLI, for the end-of-file check that no token was printed. */
export const seenOutput: string[] = [];

/** Runs `chat ...args` to completion. */
export async function runChat(args: string[], options: ChatRunOptions = {}): Promise<ChatRun> {
  const child = spawn(process.execPath, [CHAT_BIN, ...args], {
    cwd: testConfig.repoRoot,
    env: childEnv(options.env),
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (options.input !== undefined) child.stdin!.end(options.input);
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  const result = await collect(child);
  clearTimeout(timer);
  return result;
}

async function collect(child: ChildProcess): Promise<ChatRun> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  seenOutput.push(stdout, stderr);
  return { code, signal, stdout, stderr };
}

/** A long-running `chat` (tail): its output so far, a wait for a pattern, and a stop by signal. */
export class ChatFollower {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  private readonly closed: Promise<ChatRun>;

  constructor(args: string[], options: ChatRunOptions = {}) {
    this.child = spawn(process.execPath, [CHAT_BIN, ...args], { cwd: testConfig.repoRoot, env: childEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (c: Buffer) => (this.stdout += c.toString('utf8')));
    this.child.stderr!.on('data', (c: Buffer) => (this.stderr += c.toString('utf8')));
    this.closed = once(this.child, 'close').then(([code, signal]) => {
      seenOutput.push(this.stdout, this.stderr);
      return { code: code as number | null, signal: signal as NodeJS.Signals | null, stdout: this.stdout, stderr: this.stderr };
    });
  }

  /** Waits until stdout has `count` lines matching `pattern`. */
  async waitForLines(pattern: RegExp, count: number, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const matches = this.stdout.split('\n').filter((l) => pattern.test(l)).length;
      if (matches >= count) return;
      if (this.child.exitCode !== null) throw new Error(`chat exited (${this.child.exitCode}) early:\n${this.stdout}\n${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`chat printed ${matches} of ${count} lines matching ${pattern}:\n${this.stdout}\n${this.stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Sends `signal` and waits for the exit. */
  async stop(signal: NodeJS.Signals = 'SIGINT'): Promise<ChatRun> {
    this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    const run = await this.closed;
    clearTimeout(timer);
    return run;
  }
}
