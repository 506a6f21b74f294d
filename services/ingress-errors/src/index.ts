export { IngressErrorsEnvSchema } from './config.ts';
