import { ERROR_RESPONSES, requestIdResponseHeader, type ErrorStatus } from './openapi-components.ts';
import { schemaRef, type JsonObject } from './openapi-schemas.ts';

type OperationKind =
  | 'room'
  | 'listMessages'
  | 'append'
  | 'roomStream'
  | 'listInbox'
  | 'acknowledge'
  | 'inboxStream'
  | 'listHistory'
  | 'search'
  | 'listFeed'
  | 'acknowledgeFeed'
  | 'feedStream'
  | 'createWebhook'
  | 'listWebhooks'
  | 'deleteWebhook'
  | 'listDeadLetters'
  | 'redeliver';

interface OperationSpec {
  operationId: string;
  method: 'get' | 'post' | 'delete';
  path: string;
  kind: OperationKind;
  branch: boolean;
  summary: string;
  /** True for an operation this service adds to the contract; it is marked `x-chat-extension` in the document. */
  extension?: boolean;
}

const REPO = '/v1/repositories/{repositoryId}';
const WEBHOOKS = '/v1/webhooks';
const WEBHOOK = `${WEBHOOKS}/{webhookId}`;
const BRANCH = `${REPO}/branches/{branchId}`;

/** The eleven operations of spec section 4, in the spec's order. */
const OPERATIONS: readonly OperationSpec[] = [
  { operationId: 'getRepositoryRoom', method: 'get', path: `${REPO}/room`, kind: 'room', branch: false, summary: 'Get the repository room' },
  { operationId: 'getBranchRoom', method: 'get', path: `${BRANCH}/room`, kind: 'room', branch: true, summary: 'Get a branch room' },
  { operationId: 'listRepositoryMessages', method: 'get', path: `${REPO}/room/messages`, kind: 'listMessages', branch: false, summary: 'List repository room messages, oldest first' },
  { operationId: 'listBranchMessages', method: 'get', path: `${BRANCH}/room/messages`, kind: 'listMessages', branch: true, summary: 'List branch room messages, oldest first' },
  { operationId: 'appendRepositoryMessage', method: 'post', path: `${REPO}/room/messages`, kind: 'append', branch: false, summary: 'Append a message to the repository room' },
  { operationId: 'appendBranchMessage', method: 'post', path: `${BRANCH}/room/messages`, kind: 'append', branch: true, summary: 'Append a message to a branch room' },
  { operationId: 'streamRepositoryRoom', method: 'get', path: `${REPO}/room/events`, kind: 'roomStream', branch: false, summary: 'Stream the repository room' },
  { operationId: 'streamBranchRoom', method: 'get', path: `${BRANCH}/room/events`, kind: 'roomStream', branch: true, summary: 'Stream a branch room' },
  { operationId: 'listRepositoryInbox', method: 'get', path: `${REPO}/inbox`, kind: 'listInbox', branch: false, summary: 'List the caller\'s inbox for a repository' },
  { operationId: 'acknowledgeRepositoryInbox', method: 'post', path: `${REPO}/inbox/acknowledgements`, kind: 'acknowledge', branch: false, summary: 'Move the caller\'s inbox checkpoint' },
  { operationId: 'streamRepositoryInbox', method: 'get', path: `${REPO}/inbox/events`, kind: 'inboxStream', branch: false, summary: 'Stream the caller\'s inbox for a repository' },
];

/**
 * Operations beyond the contract. The contract's lists page forward only, so a client could reach
 * a room's newest message only by reading its whole history; the history operations read a room from
 * its newest message, before or after any message, or starting at one, at the cost of one page. The
 * contract's inbox is one per repository, so a bot installed on many repositories would hold one
 * stream each; the principal inbox operations list, acknowledge and stream the caller's feed, its
 * notifications in every repository it may read, in one sequence. The search operations find
 * messages again by words, identifiers, paths, URLs, commit prefixes and filters (docs/interface.md,
 * "Extensions": search). The webhook operations let a principal receive its feed by signed HTTPS POST
 * instead of holding a stream, and read and redeliver what failed (docs/interface.md, "Extensions":
 * webhooks).
 */
const EXTENSION_OPERATIONS: readonly OperationSpec[] = [
  { operationId: 'listRepositoryMessageHistory', method: 'get', path: `${REPO}/room/history`, kind: 'listHistory', branch: false, summary: 'Read the repository room from its newest message, or before, after or at a message (extension)', extension: true },
  { operationId: 'listBranchMessageHistory', method: 'get', path: `${BRANCH}/room/history`, kind: 'listHistory', branch: true, summary: 'Read a branch room from its newest message, or before, after or at a message (extension)', extension: true },
  { operationId: 'searchRepository', method: 'get', path: `${REPO}/search`, kind: 'search', branch: false, summary: 'Search the messages of the repository room and all its branch rooms (extension)', extension: true },
  { operationId: 'searchRepositoryRoom', method: 'get', path: `${REPO}/room/search`, kind: 'search', branch: false, summary: 'Search the messages of the repository room (extension)', extension: true },
  { operationId: 'searchBranchRoom', method: 'get', path: `${BRANCH}/room/search`, kind: 'search', branch: true, summary: 'Search the messages of a branch room (extension)', extension: true },
  { operationId: 'listPrincipalInbox', method: 'get', path: '/v1/inbox', kind: 'listFeed', branch: false, summary: 'List the caller\'s notifications in every repository it may read, in feed order (extension)', extension: true },
  { operationId: 'acknowledgePrincipalInbox', method: 'post', path: '/v1/inbox/acknowledgements', kind: 'acknowledgeFeed', branch: false, summary: 'Move the caller\'s feed checkpoint, and with it each repository inbox checkpoint (extension)', extension: true },
  { operationId: 'streamPrincipalInbox', method: 'get', path: '/v1/inbox/events', kind: 'feedStream', branch: false, summary: 'Stream the caller\'s notifications in every repository it may read (extension)', extension: true },
  { operationId: 'createWebhook', method: 'post', path: WEBHOOKS, kind: 'createWebhook', branch: false, summary: 'Register a webhook that receives the caller\'s notifications by signed POST (extension)', extension: true },
  { operationId: 'listWebhooks', method: 'get', path: WEBHOOKS, kind: 'listWebhooks', branch: false, summary: 'List the caller\'s webhooks (extension)', extension: true },
  { operationId: 'deleteWebhook', method: 'delete', path: WEBHOOK, kind: 'deleteWebhook', branch: false, summary: 'Remove one of the caller\'s webhooks, with its pending deliveries and dead letters (extension)', extension: true },
  { operationId: 'listWebhookDeadLetters', method: 'get', path: `${WEBHOOK}/dead-letters`, kind: 'listDeadLetters', branch: false, summary: 'List the deliveries of a webhook that failed every attempt (extension)', extension: true },
  { operationId: 'redeliverWebhookDeliveries', method: 'post', path: `${WEBHOOK}/redeliveries`, kind: 'redeliver', branch: false, summary: 'Deliver dead letters of a webhook again (extension)', extension: true },
];

/** Error statuses per operation group: spec section 4, "Status codes by operation". */
const ERROR_STATUSES: Readonly<Record<OperationKind, readonly ErrorStatus[]>> = {
  room: [400, 401, 403, 503],
  listMessages: [400, 401, 403, 503],
  listInbox: [400, 401, 403, 503],
  append: [400, 401, 403, 409, 429, 503],
  roomStream: [400, 401, 403, 409, 429, 503],
  inboxStream: [400, 401, 403, 503],
  acknowledge: [400, 401, 403, 404, 409, 503],
  listHistory: [400, 401, 403, 503],
  search: [400, 401, 403, 429, 503],
  // The caller's own feed: nothing to deny; a repository it may not read is left out.
  listFeed: [400, 401, 503],
  acknowledgeFeed: [400, 401, 404, 409, 503],
  feedStream: [400, 401, 503],
  // The caller's own webhooks: another principal's webhook is one that does not exist (404), never 403.
  createWebhook: [400, 401, 409, 503],
  listWebhooks: [400, 401, 503],
  deleteWebhook: [400, 401, 404, 503],
  listDeadLetters: [400, 401, 404, 503],
  redeliver: [400, 401, 404, 503],
};

const FEED_CURSOR_INVALID =
  'CURSOR_INVALID: not a feed cursor of the caller (forged, edited, another principal\'s, or a room or repository inbox cursor)';
const WEBHOOK_NOT_FOUND = 'RESOURCE_NOT_FOUND: the caller has no webhook of this ID (another principal\'s webhook is answered the same).';
const WEBHOOK_PRINCIPAL_UNAVAILABLE = 'AUTHORIZATION_UNAVAILABLE: core could not confirm the caller; STORE_UNAVAILABLE.';
const PRINCIPAL_REJECTED = 'AUTHENTICATION_REQUIRED, or TOKEN_REJECTED: the token is rejected, or core says its principal is no longer valid (revoked token or bot credential).';

// Operation-specific meanings of shared statuses; a 3.1 Reference Object may override `description`.
const ERROR_DETAILS: Partial<Record<OperationKind, Partial<Record<ErrorStatus, string>>>> = {
  append: {
    403: 'Write capability (humans) or `message:append` capability (bots) denied.',
    409: 'ROOM_SEALED, IDEMPOTENCY_KEY_REUSED (same key, different Markdown) or RESOURCE_CONFLICT.',
    429: 'RATE_LIMITED: retry after `Retry-After` seconds with the same Idempotency-Key.',
  },
  roomStream: {
    409: 'The room is virtual and its scope is sealed, so it cannot be materialized.',
    429: 'STREAM_PRINCIPAL_LIMIT or STREAM_ROOM_LIMIT: a stream cap is reached; retry after `Retry-After` seconds.',
  },
  inboxStream: {
    503: 'STREAM_UNAVAILABLE with `Retry-After`: the caller already holds as many inbox streams as its per-principal cap allows (all repositories together), or the stream listener is unavailable; AUTHORIZATION_UNAVAILABLE or STORE_UNAVAILABLE: core or the store is unavailable.',
  },
  listHistory: {
    400: 'SCOPE_INVALID, LIMIT_INVALID, CURSOR_INVALID (a cursor of another room, forged or edited, or any cursor while the room has no message) or CURSOR_CONFLICT (more than one of `before`, `after` and `at`).',
  },
  search: {
    400: 'SCOPE_INVALID; REQUEST_INVALID: `q` missing, empty, longer than 512 characters, or not in the query language (an unclosed quote, an unknown or empty filter, a `from:`/`mentions:` value that is not a principal ID, an `in:` value that is neither `repository` nor a branch ULID or used on a single-room search, a `before:`/`after:` value that is not an ISO 8601 date or date-time, `order` not `relevance` or `newest`); LIMIT_INVALID; CURSOR_INVALID (not a cursor of this search: forged, edited, or from another query, order or scope).',
    403: 'Read denied on the repository (humans) or no live `room:read` grant on it (bots), as for every read of its rooms.',
    429: 'RATE_LIMITED: the caller\'s search budget is spent; retry after `Retry-After` seconds.',
    503: 'STORE_UNAVAILABLE with `Retry-After`: the store is unavailable, or the query ran past its time bound (the message says so; narrow the query with more words or filters); AUTHORIZATION_UNAVAILABLE.',
  },
  acknowledge: {
    404: 'The notification is unavailable to the principal.',
    409: 'INBOX_CHECKPOINT_STALE: `expectedCursor` differs from the current checkpoint.',
  },
  listFeed: {
    400: `LIMIT_INVALID, or ${FEED_CURSOR_INVALID}.`,
    401: PRINCIPAL_REJECTED,
    503: 'AUTHORIZATION_UNAVAILABLE: core could not say which repositories the caller may read; STORE_UNAVAILABLE.',
  },
  acknowledgeFeed: {
    400: `REQUEST_INVALID (not an AcknowledgeInboxRequest), or ${FEED_CURSOR_INVALID}.`,
    401: PRINCIPAL_REJECTED,
    404: 'No notification of the caller\'s feed is at `throughCursor`.',
    409: 'INBOX_CHECKPOINT_STALE: `expectedCursor` differs from the feed checkpoint.',
    503: 'AUTHORIZATION_UNAVAILABLE: core could not confirm the caller; STORE_UNAVAILABLE.',
  },
  createWebhook: {
    400: 'REQUEST_INVALID: not a CreateWebhookRequest (a `secret` outside 16–256 printable ASCII characters, a `url` longer than 2048 characters), or a URL the service will not send to: not `https` (plain `http` only to loopback where loopback is allowed), credentials or a fragment in it, or a host that is a private, loopback or link-local address (the message says which).',
    401: PRINCIPAL_REJECTED,
    409: 'RESOURCE_CONFLICT: the caller already holds as many webhooks as a principal may (`WEBHOOKS_PER_PRINCIPAL`).',
    503: WEBHOOK_PRINCIPAL_UNAVAILABLE,
  },
  listWebhooks: { 401: PRINCIPAL_REJECTED, 503: WEBHOOK_PRINCIPAL_UNAVAILABLE },
  deleteWebhook: { 401: PRINCIPAL_REJECTED, 404: WEBHOOK_NOT_FOUND, 503: WEBHOOK_PRINCIPAL_UNAVAILABLE },
  listDeadLetters: {
    400: 'LIMIT_INVALID, or CURSOR_INVALID: not a dead-letter cursor of this webhook (forged, edited, another webhook\'s, or a cursor of another kind).',
    401: PRINCIPAL_REJECTED,
    404: WEBHOOK_NOT_FOUND,
    503: WEBHOOK_PRINCIPAL_UNAVAILABLE,
  },
  redeliver: {
    400: 'REQUEST_INVALID: not a RedeliverWebhookRequest (`deliveryIds`, when present, is 1 to 100 non-empty strings).',
    401: PRINCIPAL_REJECTED,
    404: WEBHOOK_NOT_FOUND,
    503: WEBHOOK_PRINCIPAL_UNAVAILABLE,
  },
  feedStream: {
    400: `CURSOR_CONFLICT (\`Last-Event-ID\` and \`cursor\` differ), ${FEED_CURSOR_INVALID}, or REQUEST_INVALID: \`include\` is not \`message\`.`,
    401: PRINCIPAL_REJECTED,
    503: 'STREAM_UNAVAILABLE with `Retry-After`: the caller already holds as many inbox streams as its per-principal cap allows (this stream counts as one), or the stream listener is unavailable; AUTHORIZATION_UNAVAILABLE or STORE_UNAVAILABLE: core or the store is unavailable.',
  },
};

const SHARED_EVENTS = [
  { event: 'heartbeat', id: 'none', data: 'HeartbeatEventData', meaning: 'liveness signal with server time; never advances resume state' },
  { event: 'handoff', id: 'none', data: 'HandoffEventData', meaning: 'planned server rotation (reason `stream_rotation`); reconnect from the last durable cursor' },
  { event: 'reauthorize', id: 'none', data: 'ReauthorizeEventData', meaning: 'access changed or could not be confirmed; the server closes the stream; refresh authority before reconnecting' },
];

const STREAM_EVENTS = {
  roomStream: [
    { event: 'message', id: 'durable message cursor (valid as `cursor` on the list operation)', data: 'MessageResponse', meaning: 'one committed message, in (createdAt, messageId) order' },
    ...SHARED_EVENTS,
  ],
  inboxStream: [
    { event: 'notification', id: 'durable notification cursor (valid as `cursor` on listRepositoryInbox)', data: 'NotificationResponse', meaning: 'one notification; only notification events carry durable IDs' },
    ...SHARED_EVENTS,
  ],
  feedStream: [
    {
      event: 'notification',
      id: 'durable feed cursor (valid as `cursor` on listPrincipalInbox)',
      data: 'FeedNotificationResponse',
      meaning: 'one notification of a repository the caller may read, in feed order; its `cursor` is its repository inbox cursor; with `include=message`, its `message` is the notified message; only notification events carry durable IDs',
    },
    ...SHARED_EVENTS,
  ],
};

function jsonResponse(description: string, schemaId: string): JsonObject {
  return {
    description,
    headers: { 'X-Request-Id': requestIdResponseHeader },
    content: { 'application/json': { schema: schemaRef(schemaId) } },
  };
}

function streamResponse(kind: 'roomStream' | 'inboxStream' | 'feedStream'): JsonObject {
  const events = STREAM_EVENTS[kind];
  const lines = events.map((e) => `- \`${e.event}\` (SSE id: ${e.id}; data: ${e.data}): ${e.meaning}.`);
  return {
    description: [
      'A text/event-stream. Events, whose `data` is one JSON document of the named component schema:',
      ...lines,
      'No other event kinds are sent. Reconnect with the last durable cursor in `Last-Event-ID`.',
    ].join('\n'),
    headers: { 'X-Request-Id': requestIdResponseHeader },
    content: { 'text/event-stream': { schema: { type: 'string' } } },
    'x-sse-events': events.map((e) => ({ event: e.event, id: e.id, data: schemaRef(e.data) })),
  };
}

function successResponses(kind: OperationKind): JsonObject {
  switch (kind) {
    case 'room':
      return { 200: jsonResponse('The room; an empty virtual room (`persisted` false) when none is stored yet.', 'RoomResponse') };
    case 'listMessages':
      return { 200: jsonResponse('A page of messages, oldest first by (createdAt, messageId).', 'MessagePageResponse') };
    case 'append':
      return {
        200: jsonResponse('Exact retry with the same Idempotency-Key: the original message.', 'MessageResponse'),
        201: jsonResponse('The new message.', 'MessageResponse'),
      };
    case 'listHistory':
      return {
        200: jsonResponse(
          'Up to `limit` consecutive messages, oldest first by (createdAt, messageId): the newest ones (no cursor), those just before `before`, those just after `after`, or the one `at` names and those after it.',
          'MessageHistoryPageResponse',
        ),
      };
    case 'search':
      return {
        200: jsonResponse(
          'A page of the messages that match `q`, most relevant first (`order=relevance`, the default) or newest first (`order=newest`), each with its room, its durable cursor and highlighted fragments.',
          'SearchPageResponse',
        ),
      };
    case 'listInbox':
      return { 200: jsonResponse('A page of the caller\'s notifications, with its acknowledged checkpoint.', 'InboxPageResponse') };
    case 'acknowledge':
      return { 200: jsonResponse('The checkpoint after the acknowledgement.', 'AcknowledgeInboxResponse') };
    case 'listFeed':
      return {
        200: jsonResponse(
          'A page of the caller\'s feed after `cursor`, in feed order, leaving out notifications of repositories the caller may not read now. Each item\'s `cursor` is its own repository inbox cursor; `nextCursor` (null at the end of the feed) and `acknowledgedCursor` (null before any acknowledgement) are feed cursors.',
          'InboxPageResponse',
        ),
      };
    case 'acknowledgeFeed':
      return { 200: jsonResponse('The feed checkpoint, a feed cursor, after the acknowledgement.', 'AcknowledgeInboxResponse') };
    case 'roomStream':
    case 'inboxStream':
    case 'feedStream':
      return { 200: streamResponse(kind) };
    case 'createWebhook':
      return { 201: jsonResponse('The registered webhook, and its signing secret, which no later answer shows.', 'CreateWebhookResponse') };
    case 'listWebhooks':
      return { 200: jsonResponse('The caller\'s webhooks, oldest first; their secrets are never shown.', 'WebhookListResponse') };
    case 'deleteWebhook':
      return { 204: { description: 'The webhook is removed: nothing more is sent to it, and its dead letters are gone.', headers: { 'X-Request-Id': requestIdResponseHeader } } };
    case 'listDeadLetters':
      return {
        200: jsonResponse(
          'A page of the webhook\'s dead letters in the order they died, each with its notification as its repository inbox shows it; those of repositories the caller may not read now are left out.',
          'WebhookDeadLetterPageResponse',
        ),
      };
    case 'redeliver':
      return { 202: jsonResponse('The dead letters queued for delivery again, each with its original delivery ID.', 'RedeliverWebhookResponse') };
  }
}

function parameters(spec: OperationSpec): JsonObject[] {
  const names = spec.path.includes('{repositoryId}') ? ['RepositoryId'] : [];
  if (spec.path.includes('{webhookId}')) names.push('WebhookId');
  if (spec.branch) names.push('BranchId');
  if (spec.kind === 'listMessages' || spec.kind === 'listInbox') names.push('Limit', 'Cursor');
  if (spec.kind === 'listHistory') names.push('Limit', 'Before', 'After', 'At');
  if (spec.kind === 'search') names.push('SearchQuery', 'SearchOrder', 'Limit', 'SearchCursor');
  if (spec.kind === 'roomStream' || spec.kind === 'inboxStream') names.push('LastEventId', 'Cursor');
  if (spec.kind === 'listFeed') names.push('Limit', 'FeedCursor');
  if (spec.kind === 'feedStream') names.push('LastEventId', 'FeedCursor', 'FeedInclude');
  if (spec.kind === 'listDeadLetters') names.push('Limit', 'DeadLetterCursor');
  if (spec.kind === 'append') names.push('IdempotencyKey', 'CoreAuthorization');
  names.push('RequestId');
  return names.map((name) => ({ $ref: `#/components/parameters/${name}` }));
}

const REQUEST_BODIES: Partial<Record<OperationKind, string>> = {
  append: 'AppendMessageRequest',
  acknowledge: 'AcknowledgeInboxRequest',
  acknowledgeFeed: 'AcknowledgeInboxRequest',
  createWebhook: 'CreateWebhookRequest',
  redeliver: 'RedeliverWebhookRequest',
};

function requestBody(kind: OperationKind): JsonObject | undefined {
  const schemaId = REQUEST_BODIES[kind];
  if (schemaId === undefined) return undefined;
  return { required: true, content: { 'application/json': { schema: schemaRef(schemaId) } } };
}

function tagOf(kind: OperationKind): string {
  if (kind === 'room') return 'rooms';
  if (kind === 'listMessages' || kind === 'append' || kind === 'listHistory' || kind === 'search') return 'messages';
  if (kind === 'roomStream' || kind === 'inboxStream' || kind === 'feedStream') return 'streams';
  if (kind === 'createWebhook' || kind === 'listWebhooks' || kind === 'deleteWebhook' || kind === 'listDeadLetters' || kind === 'redeliver') return 'webhooks';
  return 'inbox';
}

function operation(spec: OperationSpec): JsonObject {
  const responses = successResponses(spec.kind);
  for (const status of ERROR_STATUSES[spec.kind]) {
    const detail = ERROR_DETAILS[spec.kind]?.[status];
    const ref = `#/components/responses/${ERROR_RESPONSES[status].name}`;
    responses[status] = detail === undefined ? { $ref: ref } : { $ref: ref, description: detail };
  }
  const body = requestBody(spec.kind);
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    tags: [tagOf(spec.kind)],
    security: [{ chatOAuthBearer: [] }, { botBearer: [] }],
    parameters: parameters(spec),
    ...(body === undefined ? {} : { requestBody: body }),
    responses,
    ...(spec.extension ? { 'x-chat-extension': true } : {}),
  };
}

/** The `paths` object of the contract. */
export function buildPaths(): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const spec of [...OPERATIONS, ...EXTENSION_OPERATIONS]) {
    paths[spec.path] = { ...paths[spec.path], [spec.method]: operation(spec) };
  }
  return paths;
}
