export type { RequestScope } from './locals.ts';
export { assignRequestId } from './request-id.ts';
export { errorHandler } from './error-handler.ts';
export { methodNotAllowed } from './method-not-allowed.ts';
export { authenticate, authorize, parseScope } from './access.ts';
export { accessLog } from './access-log.ts';
