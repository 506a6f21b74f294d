import { AppError } from '@chat/contracts';

/**
 * SQLSTATE classes that mean "the database is not there right now", not "your query is wrong", and
 * class 40, a transaction the database rolled back whole (a deadlock victim, a serialization
 * failure): nothing of it was written, and the same request sent again succeeds.
 */
const UNAVAILABLE_SQLSTATE = /^(08|40|53|57|58)/;
const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH']);
const UNAVAILABLE_MESSAGES = /(timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error|connection is closed|terminating connection|PGlite is closed|canceling statement due to statement timeout)/i;

/** True when `err` says the store is unreachable or overloaded (so the caller answers 503). */
export function isStoreUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_NODE_CODES.has(code))) return true;
    if (UNAVAILABLE_MESSAGES.test(e.message)) return true;
  }
  return false;
}

/**
 * A search ran past its time bound (`statement_timeout`): the query asks too much of the index. Its
 * cause is the cancelled statement's error, which alone would read as an outage.
 */
export class SearchTimeoutError extends Error {
  constructor(readonly timeoutMs: number, options?: { cause?: unknown }) {
    super(`the search ran past its bound of ${timeoutMs} ms`, options);
    this.name = 'SearchTimeoutError';
  }
}

/**
 * Runs a store operation and turns an outage into `STORE_UNAVAILABLE` (503). Other errors pass
 * through unchanged: they are bugs, and the error middleware logs them, or, like
 * SearchTimeoutError, the caller's to answer.
 */
export async function storeCall<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (err) {
    if (err instanceof AppError || err instanceof SearchTimeoutError) throw err;
    if (isStoreUnavailable(err)) {
      throw new AppError('STORE_UNAVAILABLE', 'The message store is unavailable; retry later.', { cause: err, retryAfterSeconds: 1 });
    }
    throw err;
  }
}
