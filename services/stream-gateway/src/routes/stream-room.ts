import type { StreamLease } from '@chat/stream-caps';
import type { ScopeAccess } from '@chat/authz-client';
import type { AuthorizedRequest } from '@chat/http-kit';
import { roomScopeKey } from '@chat/store';
import type { GatewayDeps } from '../deps.ts';
import { resolveRoomStreamTarget } from '../domain/open-room-stream.ts';
import { resumeCursor } from '../domain/resume-input.ts';
import { principalKey, ScopeGrant } from '../domain/scope-grant.ts';
import { openStream } from '../domain/stream-engine.ts';
import { requireEventStream, scopeRequest } from './event-stream.ts';

/**
 * streamRepositoryRoom / streamBranchRoom, once the pipeline authorized the read: the resume input
 * and Accept, then the room, the stream cap, and the stream, which keeps the response.
 * @throws AppError before anything was written.
 */
export async function streamRoom(deps: GatewayDeps, request: AuthorizedRequest<ScopeAccess>): Promise<void> {
  const { principal, scope, access, requestId, req, res } = request;
  const cursor = resumeCursor(req.headers['last-event-id'], request.query.cursor);
  requireEventStream(req);
  let lease: StreamLease | undefined;
  try {
    const target = await resolveRoomStreamTarget(deps, {
      scope,
      scopeSealed: access.scopeState === 'sealed',
      cursor,
      reserve: async () => {
        lease = await deps.leases.acquire({ principalKey: principalKey(principal), roomKey: roomScopeKey(scope) });
      },
    });
    const held = lease!;
    lease = undefined; // from here the session owns it
    await openStream(deps.engine, {
      res,
      source: target.source,
      afterSeq: target.afterSeq,
      grant: new ScopeGrant(deps.core, principal, scopeRequest(scope)),
      lease: held,
      requestId,
    });
  } finally {
    if (lease) await lease.release().catch((err: unknown) => deps.logger.warn({ err }, 'stream lease release failed'));
  }
}
