import { decidePrincipalAccess, decideScopeAccess, type PrincipalAccess, type ScopeAccess } from '@chat/authz-client';
import { AppError, openApiDocument } from '@chat/contracts';
import type { AuthorizedRequest, Route, RouteTable } from '@chat/http-kit';

type ScopedRequest = AuthorizedRequest<ScopeAccess>;
import type { ApiDeps } from '../deps.ts';
import { acknowledgeInbox } from '../domain/acknowledge-inbox.ts';
import { acknowledgePrincipalInbox } from '../domain/acknowledge-principal-inbox.ts';
import { appendMessage } from '../domain/append-message.ts';
import { getRoom } from '../domain/get-room.ts';
import { parseHistoryAnchor } from '../domain/history-query.ts';
import { inboxOwnerOf, listInbox } from '../domain/list-inbox.ts';
import { listMessageHistory } from '../domain/list-message-history.ts';
import { listMessages } from '../domain/list-messages.ts';
import { listPrincipalInbox } from '../domain/list-principal-inbox.ts';
import { listWebhookDeadLetters } from '../domain/list-webhook-dead-letters.ts';
import { listWebhooks } from '../domain/list-webhooks.ts';
import { parseCursorParam, parseLimit } from '../domain/page-query.ts';
import { redeliverWebhookDeliveries } from '../domain/redeliver-webhook-deliveries.ts';
import { registerWebhook } from '../domain/register-webhook.ts';
import { removeWebhook } from '../domain/remove-webhook.ts';
import { searchMessages } from '../domain/search-messages.ts';
import { parseSearchOrder, parseSearchQuery } from '../domain/search-query.ts';

const REPOSITORY_ROOM = '/v1/repositories/:repositoryId/room';
const BRANCH_ROOM = '/v1/repositories/:repositoryId/branches/:branchId/room';
const INBOX = '/v1/repositories/:repositoryId/inbox';
const PRINCIPAL_INBOX = '/v1/inbox';
const REPOSITORY_SEARCH = '/v1/repositories/:repositoryId/search';
const WEBHOOKS = '/v1/webhooks';
const WEBHOOK = '/v1/webhooks/:webhookId';

/** The room lookup of a scoped request: its scope, and whether core calls it sealed. */
const roomOf = ({ scope, access }: ScopedRequest) => ({ scope, scopeSealed: access.scopeState === 'sealed' });

/**
 * The API's routes, each declared once: room metadata, message lists, appends and the history read
 * (an extension) for repository and branch rooms alike, search (an extension) of one room or of all
 * the repository's rooms, the caller's inbox and its acknowledgements, the caller's feed across
 * repositories and its acknowledgements (an extension), the caller's webhooks and their dead letters
 * (an extension), and the OpenAPI document. Every scoped and principal route is authorized live by
 * the pipeline before it runs.
 */
export function apiRoutes(deps: ApiDeps): RouteTable<ScopeAccess, PrincipalAccess> {
  const roomRoutes = (room: string): Route<ScopeAccess>[] => [
    { method: 'GET', path: room, access: 'read', handle: async (r) => ({ status: 200, body: await getRoom(deps, roomOf(r)) }) },
    {
      method: 'GET',
      path: `${room}/messages`,
      access: 'read',
      handle: async (r) => ({ status: 200, body: await listMessages(deps, { ...roomOf(r), limit: parseLimit(r.query.limit), cursor: parseCursorParam(r.query.cursor) }) }),
    },
    { method: 'POST', path: `${room}/messages`, access: 'write', body: 'json', handle: (r) => append(deps, r) },
    // Extension: the room read from its newest message, or before, after or at a message.
    {
      method: 'GET',
      path: `${room}/history`,
      access: 'read',
      handle: async (r) => ({ status: 200, body: await listMessageHistory(deps, { ...roomOf(r), limit: parseLimit(r.query.limit), anchor: parseHistoryAnchor(r.query) }) }),
    },
    // Extension: search this room.
    { method: 'GET', path: `${room}/search`, access: 'read', handle: (r) => search(deps, r, { branchId: r.scope.branchId }) },
  ];
  return {
    service: 'api',
    // With tracing on, every API request is a server span: an append's trace starts here.
    traced: true,
    services: {
      logger: deps.logger,
      httpDuration: deps.metrics.httpDuration,
      access: {
        decide: (request, action) => decideScopeAccess(deps, request, action),
        decidePrincipal: (request) => decidePrincipalAccess(deps, request),
      },
      bodyLimitBytes: deps.limits.bodyLimitBytes,
    },
    routes: [
      ...roomRoutes(REPOSITORY_ROOM),
      ...roomRoutes(BRANCH_ROOM),
      // Extension: search the repository room and all its branch rooms; read access to the
      // repository is what it takes, as for reading its room.
      { method: 'GET', path: REPOSITORY_SEARCH, access: 'read', handle: (r) => search(deps, r, undefined) },
      // Read access to the repository is what a principal needs for its own inbox there.
      {
        method: 'GET',
        path: INBOX,
        access: 'read',
        handle: async ({ principal, scope, query }) => ({
          status: 200,
          body: await listInbox(deps, { owner: inboxOwnerOf(principal, scope.repositoryId), limit: parseLimit(query.limit), cursor: parseCursorParam(query.cursor) }),
        }),
      },
      {
        method: 'POST',
        path: `${INBOX}/acknowledgements`,
        access: 'read',
        body: 'json',
        handle: async ({ principal, scope, body }) => ({ status: 200, body: await acknowledgeInbox(deps, { owner: inboxOwnerOf(principal, scope.repositoryId), body }) }),
      },
      // Extension: the caller's own feed, every repository core lists it as able to read now.
      {
        method: 'GET',
        path: PRINCIPAL_INBOX,
        access: 'principal',
        handle: async ({ principal, readable, query }) => ({
          status: 200,
          body: await listPrincipalInbox(deps, { principal, readable, limit: parseLimit(query.limit), cursor: parseCursorParam(query.cursor) }),
        }),
      },
      {
        method: 'POST',
        path: `${PRINCIPAL_INBOX}/acknowledgements`,
        access: 'principal',
        body: 'json',
        handle: async ({ principal, body }) => ({ status: 200, body: await acknowledgePrincipalInbox(deps, { principal, body }) }),
      },
      // Extension: the caller's own webhooks. Another principal's webhook is one that does not exist.
      {
        method: 'POST',
        path: WEBHOOKS,
        access: 'principal',
        body: 'json',
        handle: async ({ principal, body }) => ({ status: 201, body: await registerWebhook(deps, { principal, body }) }),
      },
      { method: 'GET', path: WEBHOOKS, access: 'principal', handle: async ({ principal }) => ({ status: 200, body: await listWebhooks(deps, { principal }) }) },
      {
        method: 'DELETE',
        path: WEBHOOK,
        access: 'principal',
        handle: async ({ principal, params }) => {
          await removeWebhook(deps, { principal, webhookId: params.webhookId! });
          return { status: 204, body: undefined };
        },
      },
      {
        method: 'GET',
        path: `${WEBHOOK}/dead-letters`,
        access: 'principal',
        handle: async ({ principal, readable, params, query }) => ({
          status: 200,
          body: await listWebhookDeadLetters(deps, { principal, readable, webhookId: params.webhookId!, limit: parseLimit(query.limit), cursor: parseCursorParam(query.cursor) }),
        }),
      },
      {
        method: 'POST',
        path: `${WEBHOOK}/redeliveries`,
        access: 'principal',
        body: 'json',
        handle: async ({ principal, params, body }) => ({ status: 202, body: await redeliverWebhookDeliveries(deps, { principal, webhookId: params.webhookId!, body }) }),
      },
      { method: 'GET', path: '/v1/openapi.json', access: 'public', handle: () => ({ status: 200, body: openApiDocument }) },
    ],
  };
}

/** POST .../messages: 201 with a new message, 200 with the original on an exact retry. */
async function append(deps: ApiDeps, r: ScopedRequest): Promise<{ status: 200 | 201; body: unknown }> {
  try {
    const { replayed, message } = await appendMessage(deps, {
      principal: r.principal,
      scope: r.scope,
      access: r.access,
      requestId: r.requestId,
      idempotencyKey: r.req.headers['idempotency-key'],
      coreAuthorization: r.req.headers['x-service-core-authorization'],
      body: r.body,
    });
    deps.metrics.appends.inc({ outcome: replayed ? 'replayed' : 'created' });
    return { status: replayed ? 200 : 201, body: message };
  } catch (err) {
    deps.metrics.appends.inc({ outcome: err instanceof AppError && err.code === 'RATE_LIMITED' ? 'rate_limited' : 'rejected' });
    throw err;
  }
}

/** GET .../search: `room` for the single-room forms, absent for the whole repository. */
async function search(deps: ApiDeps, r: ScopedRequest, room: { branchId: string | null } | undefined): Promise<{ status: 200; body: unknown }> {
  const body = await searchMessages(deps, {
    principal: r.principal,
    repositoryId: r.scope.repositoryId,
    ...(room ? { room } : {}),
    query: parseSearchQuery(r.query.q),
    order: parseSearchOrder(r.query.order),
    limit: parseLimit(r.query.limit),
    cursor: parseCursorParam(r.query.cursor),
  });
  return { status: 200, body };
}
