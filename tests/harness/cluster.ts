import { ApiClient } from './api-client.ts';
import { startChatProcess, type ChatProcess } from './chat-process.ts';
import { DevCoreClient } from './dev-core-client.ts';
import { startDevCoreProcess, type DevCoreProcess } from './dev-core-process.ts';
import { SharedFixture, type Scenario } from './fixture-factory.ts';
import { Actors, deploymentEnv } from './stacks.ts';

/** Several all-in-one processes on one PostgreSQL, one Redis and one stand-alone dev-core. */
export interface Cluster {
  core: DevCoreClient;
  fixture: SharedFixture;
  /** One validating client per process. */
  nodes: ApiClient[];
  processes: ChatProcess[];
  scenario(): Promise<{ scenario: Scenario; actors: Actors }>;
  stop(): Promise<void>;
}

/** Starts dev-core alone, then `size` chat processes at once (so their migrations race, as in production). */
export async function startCluster(size: number, env: Record<string, string> = {}): Promise<Cluster> {
  const devCore: DevCoreProcess = await startDevCoreProcess();
  const deployment = await deploymentEnv('postgres', 'cluster');
  const started = await Promise.allSettled(
    Array.from({ length: size }, (_, i) => startChatProcess({ name: `chat-node-${i}`, env: { ...deployment.env, CORE_URL: devCore.url, ...env } })),
  );
  const processes = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const stopAll = async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await devCore.stop();
    await deployment.drop();
  };
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await stopAll();
    throw failed.reason;
  }
  const core = new DevCoreClient(devCore.url);
  const fixture = new SharedFixture(core);
  const nodes = processes.map((p) => new ApiClient(p.url));
  return {
    core,
    fixture,
    nodes,
    processes,
    async scenario() {
      const scenario = await fixture.scenario();
      return { scenario, actors: new Actors(core, scenario) };
    },
    async stop() {
      for (const node of nodes) node.close();
      await stopAll();
    },
  };
}
