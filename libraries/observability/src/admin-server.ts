import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLimitedServer, DEFAULT_HTTP_SERVER_LIMITS, type HttpServerLimits } from '@chat/http-server';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

/** One dependency `/readyz` checks; `check` throws when the dependency cannot serve. */
export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
}

interface AdminServerOptions {
  port: number;
  /** Interface to bind (ADMIN_HOST): probes and scrapers reach it on the pod's address. @defaultValue '0.0.0.0' */
  host?: string;
  /** @defaultValue DEFAULT_HTTP_SERVER_LIMITS */
  limits?: HttpServerLimits;
  registry: Registry;
  checks: ReadinessCheck[];
  /** Longest wait for one readiness check. @defaultValue 2000 */
  checkTimeoutMs?: number;
  /** Where a failed check's error goes (it is kept out of `/readyz`). @defaultValue not logged */
  logger?: Pick<Logger, 'warn'>;
  /** Set while the process drains, so `/readyz` takes it out of rotation before it stops. */
  isDraining?: () => boolean;
}

export interface AdminServer {
  url: string;
  close(): Promise<void>;
}

/**
 * The admin port, kept apart from the public one: `/healthz` (the process is alive), `/readyz`
 * (every dependency answers; 503 otherwise, naming the failing ones as `failed` or `timeout` and
 * never with the error's text, which can carry hosts, user names or driver internals), `/metrics`
 * (Prometheus text format).
 */
export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
  const timeoutMs = options.checkTimeoutMs ?? 2000;
  const server: Server = createLimitedServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const reply = (status: number, body: unknown, type = 'application/json') => {
      res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    if (req.method !== 'GET') return reply(405, { status: 'method_not_allowed' });
    if (path === '/healthz') return reply(200, { status: 'ok' });
    if (path === '/readyz') {
      void readiness(options, timeoutMs).then(({ ready, checks }) => reply(ready ? 200 : 503, { status: ready ? 'ready' : 'not_ready', checks }));
      return;
    }
    if (path === '/metrics') {
      void options.registry.metrics().then(
        (text) => reply(200, text, options.registry.contentType),
        () => reply(500, 'metrics unavailable\n', 'text/plain'),
      );
      return;
    }
    reply(404, { status: 'not_found' });
  }, options.limits ?? DEFAULT_HTTP_SERVER_LIMITS);
  server.listen(options.port, options.host ?? '0.0.0.0');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await closed;
    },
  };
}

async function readiness(options: AdminServerOptions, timeoutMs: number) {
  if (options.isDraining?.()) return { ready: false, checks: { draining: 'shutting down' } as Record<string, string> };
  const results = await Promise.all(
    options.checks.map(async ({ name, check }) => {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      });
      try {
        const outcome = await Promise.race([check().then(() => 'ok' as const), deadline]);
        return [name, outcome] as const;
      } catch (err) {
        options.logger?.warn({ err, check: name }, 'readiness check failed');
        return [name, 'failed'] as const;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { ready: results.every(([, r]) => r === 'ok'), checks: Object.fromEntries(results) };
}
