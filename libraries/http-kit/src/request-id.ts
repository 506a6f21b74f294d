import type { IncomingMessage } from 'node:http';
import { REQUEST_ID_PATTERN } from '@chat/contracts';
import { newUlid } from '@chat/contracts';

/**
 * The request's ID: the client's `X-Request-Id` when it is well formed, else a new ULID. `malformed`
 * says the client sent one that is not (1–128 characters of A–Z, a–z, 0–9, ".", "_", ":" or "-").
 */
export function requestIdOf(req: IncomingMessage): { requestId: string; malformed: boolean } {
  const supplied = req.headers['x-request-id'];
  const valid = typeof supplied === 'string' && REQUEST_ID_PATTERN.test(supplied);
  return { requestId: valid ? supplied : newUlid(), malformed: supplied !== undefined && !valid };
}
