import { decidePrincipalAccess, decideScopeAccess, type PrincipalAccess, type ScopeAccess } from '@chat/authz-client';
import type { RouteTable } from '@chat/http-kit';
import type { GatewayDeps } from '../deps.ts';
import type { StreamHub } from '../domain/stream-hub.ts';
import { streamInbox } from './stream-inbox.ts';
import { streamPrincipalInbox } from './stream-principal-inbox.ts';
import { streamRoom } from './stream-room.ts';

/**
 * The gateway's routes, each declared once: the room streams, the inbox stream (all three read
 * scopes, authorized live by the pipeline before they open), the caller's inbox across repositories
 * (`/v1/inbox/events`, an extension: the pipeline asks core which repositories the caller may read),
 * and `GET /healthz`, which says whether the gateway is draining. The streams keep their connection;
 * the front may serve them straight off the socket (`http/stream-front.ts`).
 *
 * Every route the access control decides on is a stream, so `admitOpen` (the process's open rate)
 * runs first in it: a refused open costs no token check, core call or lease.
 */
export function gatewayRoutes(deps: GatewayDeps, hub: StreamHub, admitOpen: () => void = () => undefined): RouteTable<ScopeAccess, PrincipalAccess> {
  return {
    service: 'stream-gateway',
    services: {
      logger: deps.logger,
      httpDuration: deps.engine.metrics.httpDuration,
      access: {
        decide: async (request, action) => {
          admitOpen();
          return decideScopeAccess(deps, request, action);
        },
        decidePrincipal: async (request) => {
          admitOpen();
          return decidePrincipalAccess(deps, request);
        },
      },
    },
    routes: [
      { method: 'GET', path: '/v1/repositories/:repositoryId/room/events', access: 'read', stream: true, handle: (r) => streamRoom(deps, r) },
      { method: 'GET', path: '/v1/repositories/:repositoryId/branches/:branchId/room/events', access: 'read', stream: true, handle: (r) => streamRoom(deps, r) },
      { method: 'GET', path: '/v1/repositories/:repositoryId/inbox/events', access: 'read', stream: true, handle: (r) => streamInbox(deps, r) },
      { method: 'GET', path: '/v1/inbox/events', access: 'principal', stream: true, handle: (r) => streamPrincipalInbox(deps, r) },
      {
        method: 'GET',
        path: '/healthz',
        access: 'public',
        handle: () => {
          const draining = hub.stats().draining;
          return { status: draining ? 503 : 200, body: { status: draining ? 'draining' : 'ok' } };
        },
      },
    ],
  };
}
