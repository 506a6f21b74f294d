import committed from '../openapi.json' with { type: 'json' };

export { CONTRACT_VERSION, buildOpenApiDocument, serializeOpenApiDocument } from './openapi-document.ts';
export { ERROR_STATUSES, EXTENSION_OPERATIONS, OPERATIONS } from './openapi-operations.ts';

/**
 * The committed OpenAPI document (`packages/contracts/openapi.json`), which the API serves at
 * `GET /v1/openapi.json`. A test keeps it equal to `buildOpenApiDocument()`.
 */
export const openApiDocument: Record<string, unknown> = committed;
