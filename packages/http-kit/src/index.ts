export type { RequestScope } from './locals.ts';
export { assignRequestId, setResponseRequestId } from './request-id.ts';
export { errorHandler } from './error-handler.ts';
export { methodNotAllowed } from './method-not-allowed.ts';
export { authenticate, authorize, parseScope } from './access.ts';
export { accessLog } from './access-log.ts';
export { asPlainRoute, matchPlainRoute, runMiddleware, writeError, writeJson, type Middleware, type PlainRequest, type PlainResponse, type PlainRoutePattern } from './plain-route.ts';
export { readJsonBody, isPlainJsonRequest } from './json-body-reader.ts';
export { createHttpEntry, type FastRoute } from './http-entry.ts';
