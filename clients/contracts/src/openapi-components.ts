import { CANONICAL_ULID_PATTERN, REQUEST_ID_PATTERN } from './primitives.ts';
import { buildComponentSchemas, schemaRef, type JsonObject } from './openapi-schemas.ts';

/** Every response of every operation carries this header (spec sections 1 and 7). */
export const requestIdResponseHeader = { $ref: '#/components/headers/XRequestId' };

/** The error statuses section 4 uses, each answered with an ErrorEnvelope. */
export const ERROR_RESPONSES = {
  400: { name: 'BadRequest', description: 'Invalid scope, limit, cursor, header, message or request ID.' },
  401: { name: 'Unauthorized', description: 'Bearer token missing or rejected (AUTHENTICATION_REQUIRED or TOKEN_REJECTED).' },
  403: { name: 'Forbidden', description: 'Read denied, or write / append capability denied on appends (AUTHORIZATION_DENIED).' },
  404: { name: 'NotFound', description: 'The notification is unavailable to the principal.' },
  409: { name: 'Conflict', description: 'The request conflicts with the current state (see the operation).' },
  429: { name: 'TooManyRequests', description: 'A rate limit or stream cap was reached; retry after `Retry-After` seconds.' },
  503: { name: 'ServiceUnavailable', description: 'Authorization, persistence or the stream listener is unavailable.' },
} as const;
export type ErrorStatus = keyof typeof ERROR_RESPONSES;

const ulidSchema = { type: 'string', pattern: CANONICAL_ULID_PATTERN.source };

/** An optional string parameter (a cursor, a header credential): its members in the document's order. */
function optionalString(location: 'query' | 'header', name: string, description: string): JsonObject {
  return { name, in: location, required: false, description, schema: { type: 'string' } };
}

function errorResponse(status: ErrorStatus): JsonObject {
  const headers: JsonObject = { 'X-Request-Id': requestIdResponseHeader };
  if (status === 429) headers['Retry-After'] = { $ref: '#/components/headers/RetryAfter' };
  // An outage of the store or of Redis has a known short horizon; one of core's does not.
  if (status === 503) headers['Retry-After'] = { $ref: '#/components/headers/RetryAfterHint' };
  return {
    description: ERROR_RESPONSES[status].description,
    headers,
    content: { 'application/json': { schema: schemaRef('ErrorEnvelope') } },
  };
}

/** The `components` object: schemas generated from zod, plus parameters, headers, responses and security. */
export function buildComponents(): JsonObject {
  const responses: JsonObject = {};
  for (const status of Object.keys(ERROR_RESPONSES).map(Number) as ErrorStatus[]) {
    responses[ERROR_RESPONSES[status].name] = errorResponse(status);
  }
  return {
    schemas: buildComponentSchemas(),
    parameters: {
      RepositoryId: {
        name: 'repositoryId', in: 'path', required: true, description: 'Canonical ULID of the repository.', schema: ulidSchema,
      },
      BranchId: {
        name: 'branchId', in: 'path', required: true,
        description: 'Canonical ULID of the branch (never reused across delete and recreate).', schema: ulidSchema,
      },
      Limit: {
        name: 'limit', in: 'query', required: false,
        description: 'Page size. Effective range 1..200 (otherwise LIMIT_INVALID); 50 when omitted.',
        schema: { type: 'integer', minimum: 0 },
      },
      Cursor: optionalString('query', 'cursor', 'Opaque cursor from this room or inbox. Invalid, forged, non-canonical or cross-room values give CURSOR_INVALID.'),
      FeedCursor: optionalString(
        'query',
        'cursor',
        'Opaque feed cursor of the caller, from listPrincipalInbox or streamPrincipalInbox. Room and repository inbox cursors, forged, non-canonical or another principal\'s values give CURSOR_INVALID.',
      ),
      FeedInclude: {
        name: 'include',
        in: 'query',
        required: false,
        description: '`message`: each notification event carries the notified message (`message`), so a client needs no request to read it. Any other value gives REQUEST_INVALID.',
        schema: { type: 'string', enum: ['message'] },
      },
      Before: optionalString(
        'query',
        'before',
        'A message cursor of this room: read the `limit` messages just before that message. At most one of `before`, `after`, `at` (CURSOR_CONFLICT); invalid, forged or cross-room values give CURSOR_INVALID.',
      ),
      After: optionalString('query', 'after', 'A message cursor of this room: read the `limit` messages just after that message, as `cursor` on the list does.'),
      At: optionalString('query', 'at', 'A message cursor of this room: read that message and the `limit` - 1 messages after it.'),
      SearchQuery: {
        name: 'q', in: 'query', required: true,
        description: 'The search (docs/interface.md, "Extensions": search): words, each found anywhere in a message (3 characters or more match inside words and identifiers), `"exact phrases"`, and filters `from:<principal ID>`, `mentions:<principal ID>`, `in:repository` or `in:<branch ULID>`, `before:<ISO date>`, `after:<ISO date>`, `has:code`, `has:link`. 1 to 512 characters; else REQUEST_INVALID.',
        schema: { type: 'string', minLength: 1, maxLength: 512 },
      },
      SearchOrder: {
        name: 'order', in: 'query', required: false,
        description: '`relevance` (the default): most relevant first; `newest`: newest first by (createdAt, messageId). Else REQUEST_INVALID.',
        schema: { type: 'string', enum: ['relevance', 'newest'] },
      },
      SearchCursor: optionalString(
        'query',
        'cursor',
        'The `nextCursor` of the previous page of the same search (same `q`, `order` and scope); anything else gives CURSOR_INVALID.',
      ),
      WebhookId: {
        name: 'webhookId', in: 'path', required: true, description: 'Canonical ULID of one of the caller\'s webhooks.', schema: ulidSchema,
      },
      DeadLetterCursor: optionalString(
        'query',
        'cursor',
        'The `nextCursor` of the previous page of this webhook\'s dead letters; another webhook\'s, a forged, edited or any other kind of cursor gives CURSOR_INVALID.',
      ),
      LastEventId: optionalString('header', 'Last-Event-ID', 'Last durable cursor processed. Must not conflict with `cursor` (CURSOR_CONFLICT).'),
      IdempotencyKey: {
        name: 'Idempotency-Key', in: 'header', required: true,
        description: 'Canonical ULID, scoped to the authenticated sender and room; else IDEMPOTENCY_KEY_INVALID.',
        schema: ulidSchema,
      },
      CoreAuthorization: optionalString(
        'header',
        'X-Service-Core-Authorization',
        'Bearer-form core OAuth resource credential; required only for human-authored structured mentions.',
      ),
      RequestId: {
        name: 'X-Request-Id', in: 'header', required: false,
        description: 'Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent.',
        schema: { type: 'string', minLength: 1, maxLength: 128, pattern: REQUEST_ID_PATTERN.source },
      },
    },
    headers: {
      XRequestId: {
        description: 'The request ID: the client\'s X-Request-Id, or one the server made. Error bodies repeat it.',
        required: true,
        schema: { type: 'string', minLength: 1, maxLength: 128, pattern: REQUEST_ID_PATTERN.source },
      },
      RetryAfter: {
        description: 'Whole seconds to wait before retrying.',
        required: true,
        schema: { type: 'integer', minimum: 0 },
      },
      RetryAfterHint: {
        description: 'Whole seconds to wait before retrying, when the service knows (STORE_UNAVAILABLE, STREAM_UNAVAILABLE); absent otherwise (AUTHORIZATION_UNAVAILABLE).',
        required: false,
        schema: { type: 'integer', minimum: 0 },
      },
    },
    responses,
    securitySchemes: {
      chatOAuthBearer: {
        type: 'http', scheme: 'bearer', bearerFormat: 'JWT',
        description: 'Human marketplace OAuth access token whose audience is this chat service. Identity-provider ID tokens and marketplace app tokens are rejected.',
      },
      botBearer: {
        type: 'http', scheme: 'bearer', bearerFormat: 'JWT',
        description: 'Grant-bound bot access token; needs a live `room:read` or `message:append` capability.',
      },
    },
  };
}
