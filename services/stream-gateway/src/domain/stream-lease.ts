/**
 * The stream-cap lease contract of `@chat/coordination` (StreamLeaseRegistry), declared here so the
 * gateway codes against the interface alone; any registry with this shape plugs in.
 */

/** One held stream slot, counted against its principal and its room. */
export interface StreamLease {
  /** Frees the slot; called exactly once per lease, on every close path. */
  release(): Promise<void>;
}

export interface StreamLeaseRequest {
  /** Who holds the stream, e.g. `user:u_alice` or `bot:b_ci`. */
  principalKey: string;
  /** What the stream reads, e.g. the room's scope key. */
  roomKey: string;
}

export interface StreamLeaseRegistry {
  /**
   * Takes a slot or refuses.
   * @throws AppError STREAM_PRINCIPAL_LIMIT / STREAM_ROOM_LIMIT (429 with retryAfterSeconds), STREAM_UNAVAILABLE
   */
  acquire(request: StreamLeaseRequest): Promise<StreamLease>;
}
