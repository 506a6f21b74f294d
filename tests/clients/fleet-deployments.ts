import { createServer } from 'node:http';
import type { DevCoreClient } from '../harness/dev-core-client.ts';
import { SharedFixture } from '../harness/fixture-factory.ts';
import { startStack } from '../harness/stacks.ts';
import { closeServer, listenOnLoopback, proxyRequest } from '../harness/streaming-proxy.ts';
import { startDistributedCluster, type ServiceHandle } from '../inbox/distributed-cluster.ts';

/** A running deployment as the fleet tests use it: one URL, its core, and (distributed) its processes. */
export interface FleetDeployment {
  url: string;
  core: DevCoreClient;
  fixture: SharedFixture;
  /** The separate processes, in the distributed shape: what a test may SIGKILL. */
  processes?: { apis: ServiceHandle[]; notifiers: ServiceHandle[] };
  stop(): Promise<void>;
}

/** Extra environment: `service` for every chat process (the all-in-one, or each API, gateway and notifier). */
export interface FleetEnv {
  api?: Record<string, string>;
  gateway?: Record<string, string>;
  notifier?: Record<string, string>;
}

/** The all-in-one gets every role's environment. */
function merged(env: FleetEnv): Record<string, string> {
  return { ...env.api, ...env.gateway, ...env.notifier };
}

/**
 * The fleet tests' two deployments: the all-in-one (embedded), and 2 APIs, 2 gateways and 2
 * notifiers behind one ingress that sends event streams to the gateways and everything else to the
 * APIs, each in turn, passing over a process that has exited (as a load balancer's health check does).
 */
export const FLEET_DEPLOYMENTS: Array<{ name: string; start(env: FleetEnv): Promise<FleetDeployment> }> = [
  {
    name: 'all-in-one (embedded)',
    async start(env) {
      const stack = await startStack('embedded', merged(env));
      return { url: stack.chat.url, core: stack.core, fixture: stack.fixture, stop: () => stack.stop() };
    },
  },
  {
    name: 'distributed (2 APIs, 2 gateways, 2 notifiers behind one ingress)',
    async start(env) {
      const cluster = await startDistributedCluster({ apis: 2, gateways: 2, notifiers: 2, env });
      let turn = 0;
      const ingress = createServer((req, res) => {
        const pool = ((req.url ?? '').split('?')[0]!.endsWith('/events') ? cluster.gateways : cluster.apis).filter((h) => !h.service.hasExited);
        proxyRequest(req, res, new URL(pool[turn++ % pool.length]!.url));
      });
      const url = await listenOnLoopback(ingress);
      return {
        url,
        core: cluster.core,
        fixture: new SharedFixture(cluster.core),
        processes: { apis: cluster.apis, notifiers: cluster.notifiers },
        async stop() {
          await closeServer(ingress);
          await cluster.stop();
        },
      };
    },
  },
];
