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
  /**
   * A dependency every pod shares (PostgreSQL, Redis, core): once it has answered, its failure
   * leaves the pod ready and `/readyz` says `degraded`. An outage of it fails every pod at once, so
   * taking pods out of the Service would only move its requests to the proxy's own error answer,
   * while a pod in the Service answers the precise 503 (`STORE_UNAVAILABLE`,
   * `AUTHORIZATION_UNAVAILABLE`, `STREAM_UNAVAILABLE`) with `Retry-After`, serves what does not need
   * it, and recovers the moment the dependency does, without a probe period's delay.
   * @defaultValue false: the pod is ready only while it answers
   */
  shared?: boolean;
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
 * (what this pod itself can serve: 503 while draining, while a check of its own fails, and until
 * every shared dependency has answered once since start; a shared dependency failing after that
 * gives 200 `degraded`; failing checks are named as `failed` or `timeout`, never with the error's
 * text, which can carry hosts, user names or driver internals), `/metrics` (Prometheus text format).
 */
export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
  const timeoutMs = options.checkTimeoutMs ?? 2000;
  const sharedSeen = new Set<string>();
  const server: Server = createLimitedServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const reply = (status: number, body: unknown, type = 'application/json') => {
      res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    if (req.method !== 'GET') return reply(405, { status: 'method_not_allowed' });
    if (path === '/healthz') return reply(200, { status: 'ok' });
    if (path === '/readyz') {
      void readiness(options, timeoutMs, sharedSeen).then(({ status, checks }) => reply(status === 'not_ready' ? 503 : 200, { status, checks }));
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

type ReadinessStatus = 'ready' | 'degraded' | 'not_ready';

/** `sharedSeen`: the shared dependencies that have answered since start. */
async function readiness(options: AdminServerOptions, timeoutMs: number, sharedSeen: Set<string>): Promise<{ status: ReadinessStatus; checks: Record<string, string> }> {
  if (options.isDraining?.()) return { status: 'not_ready', checks: { draining: 'shutting down' } };
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
  const outcome = new Map(results);
  for (const { name, shared } of options.checks) if (shared && outcome.get(name) === 'ok') sharedSeen.add(name);
  const checks = Object.fromEntries(results);
  const failing = options.checks.filter(({ name }) => outcome.get(name) !== 'ok');
  if (failing.length === 0) return { status: 'ready', checks };
  const blocking = failing.some(({ name, shared }) => !shared || !sharedSeen.has(name));
  return { status: blocking ? 'not_ready' : 'degraded', checks };
}
