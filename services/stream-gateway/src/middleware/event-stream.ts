import { AppError } from '@chat/contracts';
import type { RequestScope } from '@chat/http-kit';

/** The core request for reading a room scope (the stream's periodic recheck asks it again). */
export function scopeRequest(scope: RequestScope): { repositoryId: string; branchId?: string; action: 'read' } {
  return { repositoryId: scope.repositoryId, ...(scope.branchId === null ? {} : { branchId: scope.branchId }), action: 'read' };
}

/**
 * Whether an `Accept` header admits `text/event-stream`, decided as express's `req.accepts` decides
 * it (negotiator): no header or an empty one admits anything; otherwise the most specific range that
 * matches (`text/event-stream` over `text/*` over `*\/*`, then the higher q, then the earlier one)
 * must have q > 0. A range with parameters other than q matches only if each is `*` or empty, since
 * `text/event-stream` is offered without parameters. Both the express routes and the gateway's own
 * request listener use this one function, so the two paths cannot disagree.
 */
export function acceptsEventStream(header: string | undefined): boolean {
  if (!header) return true;
  let best: { s: number; q: number } | undefined;
  for (const range of header.split(',')) {
    const [mediaRange = '', ...params] = range.split(';');
    const [type = '', subtype = ''] = mediaRange.trim().toLowerCase().split('/');
    if (!subtype) continue;
    let s = 0;
    if (type === 'text') s |= 4;
    else if (type !== '*') continue;
    if (subtype === 'event-stream') s |= 2;
    else if (subtype !== '*') continue;
    let q = 1;
    let paramsMatch = true;
    let hasParams = false;
    for (const param of params) {
      const eq = param.indexOf('=');
      const key = (eq === -1 ? param : param.slice(0, eq)).trim().toLowerCase();
      const value = eq === -1 ? '' : param.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
      if (key === 'q') q = value === '' ? 1 : parseFloat(value);
      else if (key !== '') {
        hasParams = true;
        if (value !== '*' && value !== '') paramsMatch = false;
      }
    }
    if (!paramsMatch) continue;
    if (hasParams) s |= 1;
    // Ties on specificity go to the higher q; equal ones to the earlier range (kept).
    if (!best || s > best.s || (s === best.s && q > best.q)) best = { s, q };
  }
  return best !== undefined && best.q > 0;
}

/**
 * Streams answer only clients that accept text/event-stream (no Accept, `*\/*` and `text/*` do).
 * @throws AppError REQUEST_INVALID otherwise.
 */
export function requireEventStream(acceptHeader: string | undefined): void {
  if (!acceptsEventStream(acceptHeader)) {
    throw new AppError('REQUEST_INVALID', 'This endpoint answers text/event-stream; send Accept: text/event-stream.');
  }
}
