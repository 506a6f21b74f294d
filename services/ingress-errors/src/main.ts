/**
 * The ingress's error backend: `pnpm --filter @chat/ingress-errors start`. A process of its own
 * (Deployment `ingress-errors` in infra/k8s), so it answers while every API or gateway pod is down;
 * see `routes/ingress-error.routes.ts`. SIGTERM/SIGINT stop it after in-flight answers.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createLimitedServer, stopOnSignals } from '@chat/http-server';
import { createLogger, startAdminServer, type AdminServer } from '@chat/observability';
import { loadConfigOrExit } from '@chat/service-config';
import { loadIngressErrorsConfig } from './config.ts';
import { createIngressErrorsMetrics } from './metrics.ts';
import { createIngressErrorListener } from './routes/ingress-error.routes.ts';

const config = loadConfigOrExit(() => loadIngressErrorsConfig(process.env));
const logger = createLogger({ name: 'ingress-errors', level: config.log.level });
const { registry, answered } = createIngressErrorsMetrics();
const server = createLimitedServer(createIngressErrorListener({ logger, answered }), config.http.limits).listen(config.http.port, config.http.host);
await once(server, 'listening');
let admin: AdminServer | undefined;
const isDraining = stopOnSignals({ server, admin: () => admin, logger });
admin = await startAdminServer({ port: config.admin.port, host: config.admin.host, registry, checks: [], isDraining });
// The bound port, which PORT=0 leaves to the system.
logger.info({ port: (server.address() as AddressInfo).port, admin: admin.url }, 'ingress error backend listening');
