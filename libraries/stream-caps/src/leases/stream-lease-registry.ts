import { AppError } from '@chat/contracts';

/** One stream's slot under both caps. */
export interface StreamLease {
  readonly id: string;
  /** Frees the slot. Safe to call twice; never throws (an unreachable store frees it within the lease). */
  release(): Promise<void>;
}

/**
 * The stream caps, shared by every gateway instance: per principal and per room for room streams
 * (spec section 6 rule 9), and per principal for inbox streams, counted apart from room streams.
 */
export interface StreamLeaseRegistry {
  /**
   * Takes a slot for a new stream under both caps; throws AppError('STREAM_PRINCIPAL_LIMIT' |
   * 'STREAM_ROOM_LIMIT', msg, { retryAfterSeconds }) when full. Renewed automatically every
   * leaseMs/3 until release(); a process that dies stops renewing and its slots free within leaseMs.
   */
  acquire(input: { principalKey: string; roomKey: string }): Promise<StreamLease>;
  /**
   * Takes a slot for a new inbox stream under the per-principal inbox cap, renewed and freed like a
   * room stream's slot. The spec gives the inbox stream no 429, so a full cap throws
   * AppError('STREAM_UNAVAILABLE', msg, { retryAfterSeconds }): a 503 the client retries after
   * Retry-After, as it would any listener outage.
   */
  acquireInbox(input: { principalKey: string }): Promise<StreamLease>;
  /** Stops renewals and releases this registry's leases. */
  close(): Promise<void>;
}

/** Settings both registries share. */
export interface StreamCapOptions {
  /**
   * Concurrent streams one principal may hold across all gateways.
   * @defaultValue 16
   */
  principalCap?: number;
  /**
   * Concurrent streams one room may have across all gateways.
   * @defaultValue 2000
   */
  roomCap?: number;
  /**
   * Concurrent inbox streams one principal may hold across all gateways (all repositories together),
   * counted apart from its room streams. One person's browser tabs and devices each hold one per
   * repository they watch, so the cap sits well above what one person opens.
   * @defaultValue 64
   */
  inboxPrincipalCap?: number;
  /**
   * How long a slot outlives its last renewal; renewals run every third of it. A killed gateway's
   * slots free within this time.
   * @defaultValue 30000
   */
  leaseMs?: number;
  /**
   * Retry-After for a refused stream when the earliest slot in the way is held by a live, renewed
   * lease, which will not expire on its own; a slot that has stopped being renewed gives the whole
   * seconds until it expires instead, when that is sooner.
   * @defaultValue 5
   */
  retryAfterSeconds?: number;
}

/** {@link StreamCapOptions} with defaults applied and checked. */
export interface StreamCapSettings {
  readonly principalCap: number;
  readonly roomCap: number;
  readonly inboxPrincipalCap: number;
  readonly leaseMs: number;
  readonly retryAfterSeconds: number;
}

export function streamCapSettings(options: StreamCapOptions): StreamCapSettings {
  const settings = {
    principalCap: options.principalCap ?? 16,
    roomCap: options.roomCap ?? 2000,
    inboxPrincipalCap: options.inboxPrincipalCap ?? 64,
    leaseMs: options.leaseMs ?? 30_000,
    retryAfterSeconds: options.retryAfterSeconds ?? 5,
  };
  for (const [name, value] of Object.entries(settings)) {
    if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
  return settings;
}

/** Which cap refused a stream: a room stream's principal or room cap, or the inbox cap. */
export type StreamCapKind = 'principal' | 'room' | 'inbox';

/**
 * The answer for a full cap: 429 for room streams (spec section 6 rule 9); 503 STREAM_UNAVAILABLE
 * for inbox streams, whose statuses (section 4) are 200, 400, 401, 403 and 503 only.
 */
export function streamCapReached(kind: StreamCapKind, retryAfterSeconds: number): AppError {
  const retry = { retryAfterSeconds: Math.max(1, Math.ceil(retryAfterSeconds)) };
  switch (kind) {
    case 'principal':
      return new AppError('STREAM_PRINCIPAL_LIMIT', 'Too many open streams for this principal; retry after Retry-After seconds.', retry);
    case 'room':
      return new AppError('STREAM_ROOM_LIMIT', 'Too many open streams in this room; retry after Retry-After seconds.', retry);
    case 'inbox':
      return new AppError('STREAM_UNAVAILABLE', 'Too many open inbox streams for this principal; retry after Retry-After seconds.', retry);
  }
}

/** The 503 answer when the caps cannot be checked. */
export function streamLeasesUnavailable(cause?: unknown): AppError {
  return new AppError('STREAM_UNAVAILABLE', 'The event stream is unavailable; retry later.', { retryAfterSeconds: 1, cause });
}
