import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { testConfig } from '../harness/test-config.ts';

const BALANCER_SCRIPT = fileURLToPath(new URL('./round-robin-balancer-process.ts', import.meta.url));

/**
 * Round-robin TCP balancers in front of the gateways, as a Service is (tests/streams/round-robin-proxy.ts),
 * one per process: a balancer holds two sockets per stream, so 20,000 streams need several
 * processes under the 20,000 open-file cap of each.
 */
export class RoundRobinBalancers {
  private constructor(
    private readonly children: ChildProcess[],
    /** One URL per balancer process. */
    readonly urls: string[],
  ) {}

  static async start(count: number, backendUrls: string[]): Promise<RoundRobinBalancers> {
    const backends = JSON.stringify(backendUrls.map((u) => ({ host: new URL(u).hostname, port: Number(new URL(u).port) })));
    const children = Array.from({ length: count }, () =>
      fork(BALANCER_SCRIPT, [backends], { cwd: testConfig.repoRoot, execArgv: ['--import', 'tsx', '--conditions=@chat/source'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
    );
    const urls = await Promise.all(children.map(async (child) => ((await once(child, 'message')) as [{ url: string }])[0].url));
    return new RoundRobinBalancers(children, urls);
  }

  get pids(): number[] {
    return this.children.map((c) => c.pid!).filter(Boolean);
  }

  /** Ends every balancer process (their connections with them). */
  async close(): Promise<void> {
    await Promise.allSettled(
      this.children.map(async (child) => {
        if (child.exitCode !== null) return;
        const exited = once(child, 'exit');
        child.disconnect();
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }
}
