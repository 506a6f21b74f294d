/**
 * The viewer's own static server in the distributed deployment (Deployment `viewer` in infra/k8s):
 * `pnpm --filter @chat/viewer start`. The ingress routes the page's paths here and the API's paths
 * to the API on the same origin. SIGTERM/SIGINT stop it after in-flight answers.
 */
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createLimitedServer, stopOnSignals } from '@chat/http-server';
import { createHttpDurationHistogram, createLogger, startAdminServer, type AdminServer } from '@chat/observability';
import { loadConfigOrExit } from '@chat/service-config';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { VIEWER_DIST_DIR } from './server/index.ts';
import { loadViewerServerConfig } from './server/viewer-server-config.ts';
import { createViewerListener } from './server/viewer-server.ts';

const config = loadConfigOrExit(() => loadViewerServerConfig(process.env));
const logger = createLogger({ name: 'viewer', level: config.log.level });
const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'chat_viewer_' });
const built = existsSync(join(VIEWER_DIST_DIR, 'index.html'));
if (!built) logger.error({ directory: VIEWER_DIST_DIR }, 'the viewer bundle is missing: run `pnpm build`');
const listener = createViewerListener(config.viewer, { logger, httpDuration: createHttpDurationHistogram(registry) });
const server = createLimitedServer(listener, config.http.limits).listen(config.http.port, config.http.host);
await once(server, 'listening');
let admin: AdminServer | undefined;
const isDraining = stopOnSignals({ server, admin: () => admin, logger });
admin = await startAdminServer({
  port: config.admin.port,
  host: config.admin.host,
  registry,
  // Without its bundle the server answers 503 on the page: keep it out of rotation.
  checks: [{ name: 'bundle', check: async () => { if (!built) throw new Error('viewer bundle missing'); } }],
  isDraining,
  logger,
});
logger.info({ port: config.http.port, admin: admin.url }, 'viewer listening');
