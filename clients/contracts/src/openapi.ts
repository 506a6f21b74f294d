import committed from '../openapi.json' with { type: 'json' };

export { buildOpenApiDocument, serializeOpenApiDocument } from './openapi-document.ts';

/**
 * The committed OpenAPI document (`clients/contracts/openapi.json`), which the API serves at
 * `GET /v1/openapi.json`. A test keeps it equal to `buildOpenApiDocument()`.
 */
export const openApiDocument: Record<string, unknown> = committed;
