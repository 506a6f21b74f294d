import { ChatApiError, ChatNetworkError, ChatTokenRejectedError } from '@chat/client';

/** Answers that say the service is away or overloaded, not that the request is wrong. */
const UNAVAILABLE_STATUSES = new Set([429, 502, 503, 504]);
/** The longest pause while the service is unavailable: the SDK's default cap on stream reconnects. */
const MAX_UNAVAILABLE_PAUSE_MS = 5_000;
/** How deep `cause` chains are followed: a handler may wrap the SDK's error in its own. */
const MAX_CAUSE_DEPTH = 5;

/** How often a failing handler runs for one notification, and the pause between two runs. */
export interface HandlerAttemptPolicy {
  /** Runs that failed through the handler's own fault before the notification is passed over. */
  max: number;
  /** Pause before the second run, doubled for each one after. */
  delayMs: number;
}

/** What the runner is told while it runs one notification's handler. */
export interface HandlerAttemptEvents {
  /** A run failed and another follows after the pause. */
  retrying(error: unknown, attempt: number): void;
  /** The service could not be reached or was unavailable; runs go on, without counting, until it answers. */
  waitingForService(error: unknown): void;
  /** The last run failed: the notification is passed over. */
  givingUp(error: unknown): void;
}

/**
 * True when `error` (or an error it wraps as `cause`) says the service did not answer, or answered
 * that it is unavailable (429, 502, 503, 504 after the client's own retries). Such a failure is no
 * fault of the notification: a restart of the service produces it for every handler in hand.
 */
export function isServiceUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < MAX_CAUSE_DEPTH; depth++) {
    if (current instanceof ChatNetworkError) return true;
    if (current instanceof ChatApiError && !(current instanceof ChatTokenRejectedError) && UNAVAILABLE_STATUSES.has(current.status)) return true;
    current = current.cause;
  }
  return false;
}

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/**
 * Runs one notification's handler until it succeeds (true), or until it failed `policy.max` times
 * through its own fault (true, after `givingUp`: one poison message must not hold up a repository),
 * or until the bot stops between two runs (false: the notification stays unacknowledged).
 * A refused token is thrown at once, so the bot stops with the notification unacknowledged. A failure
 * because the service is unavailable counts no attempt: the handler runs again after a pause that
 * doubles up to 5 s, for as long as the service takes to come back, so a restart skips no mention.
 */
export async function runHandlerAttempts(run: () => Promise<void>, policy: HandlerAttemptPolicy, stopping: AbortSignal, events: HandlerAttemptEvents): Promise<boolean> {
  let failures = 0;
  let unavailableInARow = 0;
  for (;;) {
    try {
      await run();
      return true;
    } catch (error) {
      if (error instanceof ChatTokenRejectedError) throw error;
      let delayMs: number;
      if (isServiceUnavailable(error)) {
        if (unavailableInARow === 0) events.waitingForService(error);
        delayMs = Math.min(MAX_UNAVAILABLE_PAUSE_MS, policy.delayMs * 2 ** Math.min(unavailableInARow, 20));
        unavailableInARow += 1;
      } else {
        failures += 1;
        unavailableInARow = 0;
        if (failures >= policy.max) {
          events.givingUp(error);
          return true;
        }
        events.retrying(error, failures);
        delayMs = policy.delayMs * 2 ** (failures - 1);
      }
      await pause(delayMs, stopping);
      if (stopping.aborted) return false;
    }
  }
}
