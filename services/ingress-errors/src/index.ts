export { IngressErrorsEnvSchema } from './config.ts';
export { createIngressErrorsMetrics, type IngressErrorsMetrics } from './metrics.ts';
