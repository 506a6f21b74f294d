import { buildComponents } from './openapi-components.ts';
import { buildPaths } from './openapi-operations.ts';

/** Version of the HTTP contract (spec section 9). */
const CONTRACT_VERSION = '1.0.0';

/** Builds the OpenAPI 3.1 document of the contract from the zod schemas. */
export function buildOpenApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Chat service',
      version: CONTRACT_VERSION,
      description:
        'Chat for source repositories: repository and branch rooms, immutable messages, resumable SSE streams and a mention inbox. ' +
        'Every operation is authorized live against the core service. Error bodies are ErrorEnvelope and every response carries X-Request-Id.',
    },
    servers: [{ url: '{base_url}', variables: { base_url: { default: 'http://localhost:8080' } } }],
    tags: [
      { name: 'rooms', description: 'Room metadata' },
      { name: 'messages', description: 'List and append messages' },
      { name: 'inbox', description: 'Mention inbox and its checkpoint' },
      { name: 'streams', description: 'text/event-stream endpoints' },
      { name: 'webhooks', description: 'Webhooks that receive the caller\'s notifications by signed POST, and their dead letters (extension)' },
    ],
    security: [{ chatOAuthBearer: [] }, { botBearer: [] }],
    paths: buildPaths(),
    components: buildComponents(),
  };
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
  return sorted;
}

/** The committed form of the document: keys sorted at every level, 2-space indent, trailing newline. */
export function serializeOpenApiDocument(document: Record<string, unknown>): string {
  return `${JSON.stringify(sortKeys(document), null, 2)}\n`;
}
