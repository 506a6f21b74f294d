import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { testConfig } from '../harness/test-config.ts';
import { LatencyHistogram } from './latency-histogram.ts';
import type { MeasureMode, ResumeRecord, StreamTarget, WorkerCommand, WorkerReply } from './sse-load-protocol.ts';

const WORKER_SCRIPT = fileURLToPath(new URL('./sse-load-worker.ts', import.meta.url));

export interface PoolOpenResult {
  opened: number;
  failures: Record<string, number>;
  seconds: number;
}

export interface PoolReport {
  events: number;
  /** Sum over workers of events / that worker's own window. */
  eventsPerSecond: number;
  open: number;
  ended: number;
  latency: LatencyHistogram;
  /** CPU the load clients used over the window, in cores (1 = one core busy). */
  clientCores: number;
}

type Extract<T, K> = T extends { type: K } ? T : never;

/** A worker process and its one outstanding request (commands are answered in order). */
class LoadWorker {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly child: ChildProcess) {}

  call<K extends WorkerReply['type']>(command: WorkerCommand, expect: K): Promise<Extract<WorkerReply, K>> {
    const run = this.queue.then(async () => {
      // Listeners removed once answered: a bench that polls `report` must not pile them up.
      const answered = new Promise<WorkerReply>((resolve, reject) => {
        const onMessage = (message: WorkerReply) => {
          stopListening();
          resolve(message);
        };
        const onExit = () => {
          stopListening();
          reject(new Error('load worker exited'));
        };
        const stopListening = () => {
          this.child.off('message', onMessage);
          this.child.off('exit', onExit);
        };
        this.child.on('message', onMessage);
        this.child.on('exit', onExit);
      });
      this.child.send(command);
      const message = await answered;
      if (message.type !== expect) throw new Error(`load worker answered ${message.type}, expected ${expect}`);
      return message as Extract<WorkerReply, K>;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/**
 * Load clients spread over child processes (each holds at most a few thousand sockets, below the
 * per-process open-file cap, and gets its own event loop so the clients are not the bottleneck).
 */
export class SseLoadPool {
  private cpuAtReset = 0;

  private constructor(private readonly workers: LoadWorker[]) {}

  static async start(processes: number): Promise<SseLoadPool> {
    const workers = Array.from({ length: processes }, () => {
      const child = fork(WORKER_SCRIPT, [], { cwd: testConfig.repoRoot, execArgv: ['--import', 'tsx', '--conditions=@chat/source'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      return new LoadWorker(child);
    });
    const pool = new SseLoadPool(workers);
    // A first round trip proves each worker loaded.
    await Promise.all(workers.map((w) => w.call({ type: 'reset' }, 'report')));
    return pool;
  }

  get pids(): number[] {
    return this.workers.map((w) => w.child.pid!).filter(Boolean);
  }

  /** Opens the targets, dealt round-robin over the workers, each with `concurrency` opens in flight. */
  async open(targets: StreamTarget[], options: { concurrency: number; measure: MeasureMode }): Promise<PoolOpenResult> {
    const shares = this.workers.map(() => [] as StreamTarget[]);
    targets.forEach((t, i) => shares[i % shares.length]!.push(t));
    const started = performance.now();
    const replies = await Promise.all(
      this.workers.map((w, i) => w.call({ type: 'open', targets: shares[i]!, concurrency: options.concurrency, measure: options.measure }, 'opened')),
    );
    const failures: Record<string, number> = {};
    for (const r of replies) for (const [k, v] of Object.entries(r.failures)) failures[k] = (failures[k] ?? 0) + v;
    return { opened: replies.reduce((s, r) => s + r.opened, 0), failures, seconds: (performance.now() - started) / 1000 };
  }

  /** Starts a measuring window in every worker. */
  async reset(): Promise<void> {
    const replies = await Promise.all(this.workers.map((w) => w.call({ type: 'reset' }, 'report')));
    this.cpuAtReset = replies.reduce((s, r) => s + r.cpuMs, 0);
  }

  /** What every worker saw since the last reset. */
  async report(): Promise<PoolReport> {
    const replies = await Promise.all(this.workers.map((w) => w.call({ type: 'report' }, 'report')));
    const latency = new LatencyHistogram();
    for (const r of replies) latency.add(r.histogram);
    const windowMs = Math.max(...replies.map((r) => r.elapsedMs));
    return {
      events: replies.reduce((s, r) => s + r.events, 0),
      eventsPerSecond: replies.reduce((s, r) => s + (r.elapsedMs > 0 ? (r.events * 1000) / r.elapsedMs : 0), 0),
      open: replies.reduce((s, r) => s + r.open, 0),
      ended: replies.reduce((s, r) => s + r.ended, 0),
      latency,
      clientCores: (replies.reduce((s, r) => s + r.cpuMs, 0) - this.cpuAtReset) / windowMs,
    };
  }

  /** The messageIds every `ids`-mode stream received so far, by target key, in arrival order. */
  async received(): Promise<Map<string, string[]>> {
    const replies = await Promise.all(this.workers.map((w) => w.call({ type: 'received' }, 'received')));
    return new Map(replies.flatMap((r) => r.streams));
  }

  /** What every `resume`-mode stream went through so far. */
  async resumed(): Promise<ResumeRecord[]> {
    const replies = await Promise.all(this.workers.map((w) => w.call({ type: 'resumed' }, 'resumed')));
    return replies.flatMap((r) => r.streams);
  }

  /** Drops every stream; the workers stay for the next `open`. */
  async closeStreams(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.call({ type: 'drop' }, 'dropped')));
  }

  /** Drops every stream and ends the worker processes. */
  async close(): Promise<void> {
    await Promise.allSettled(
      this.workers.map(async (w) => {
        const exited = w.child.exitCode === null ? once(w.child, 'exit') : Promise.resolve();
        await w.call({ type: 'close' }, 'closed').catch(() => w.child.kill('SIGKILL'));
        const timer = setTimeout(() => w.child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }
}
