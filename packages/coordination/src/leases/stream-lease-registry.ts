import { AppError } from '@chat/contracts';

/** One stream's slot under both caps. */
export interface StreamLease {
  readonly id: string;
  /** Frees the slot. Safe to call twice; never throws (an unreachable store frees it within the lease). */
  release(): Promise<void>;
}

/** The per-principal and per-room stream caps (spec section 6 rule 9), shared by every gateway instance. */
export interface StreamLeaseRegistry {
  /**
   * Takes a slot for a new stream under both caps; throws AppError('STREAM_PRINCIPAL_LIMIT' |
   * 'STREAM_ROOM_LIMIT', msg, { retryAfterSeconds }) when full. Renewed automatically every
   * leaseMs/3 until release(); a process that dies stops renewing and its slots free within leaseMs.
   */
  acquire(input: { principalKey: string; roomKey: string }): Promise<StreamLease>;
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
  readonly leaseMs: number;
  readonly retryAfterSeconds: number;
}

export function streamCapSettings(options: StreamCapOptions): StreamCapSettings {
  const settings = {
    principalCap: options.principalCap ?? 16,
    roomCap: options.roomCap ?? 2000,
    leaseMs: options.leaseMs ?? 30_000,
    retryAfterSeconds: options.retryAfterSeconds ?? 5,
  };
  for (const [name, value] of Object.entries(settings)) {
    if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
  return settings;
}

/** Which cap refused a stream. */
export type StreamCapKind = 'principal' | 'room';

/** The 429 answer for a full cap. */
export function streamCapReached(kind: StreamCapKind, retryAfterSeconds: number): AppError {
  const retry = { retryAfterSeconds: Math.max(1, Math.ceil(retryAfterSeconds)) };
  return kind === 'principal'
    ? new AppError('STREAM_PRINCIPAL_LIMIT', 'Too many open streams for this principal; retry after Retry-After seconds.', retry)
    : new AppError('STREAM_ROOM_LIMIT', 'Too many open streams in this room; retry after Retry-After seconds.', retry);
}

/** The 503 answer when the caps cannot be checked. */
export function streamLeasesUnavailable(cause?: unknown): AppError {
  return new AppError('STREAM_UNAVAILABLE', 'The event stream is unavailable; retry later.', { retryAfterSeconds: 1, cause });
}
