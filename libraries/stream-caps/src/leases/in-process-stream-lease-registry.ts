import { randomUUID } from 'node:crypto';
import {
  streamCapReached,
  streamCapSettings,
  streamLeasesUnavailable,
  type StreamCapOptions,
  type StreamCapSettings,
  type StreamLease,
  type StreamLeaseRegistry,
} from './stream-lease-registry.ts';

/**
 * The stream caps for a single process (the all-in-one mode). Every lease lives in this process,
 * so none can outlive its holder and none needs renewing: a slot is held until release or close,
 * and a refused stream always gets the configured Retry-After.
 */
export class InProcessStreamLeaseRegistry implements StreamLeaseRegistry {
  private readonly settings: StreamCapSettings;
  private readonly principals = new Map<string, Set<string>>();
  private readonly rooms = new Map<string, Set<string>>();
  private readonly inboxes = new Map<string, Set<string>>();
  /** Each live lease's entries: the sets it holds a slot in, and its key in each. */
  private readonly live = new Map<string, Array<[Map<string, Set<string>>, string]>>();
  private closed = false;

  constructor(options: StreamCapOptions = {}) {
    this.settings = streamCapSettings(options);
  }

  async acquire(input: { principalKey: string; roomKey: string }): Promise<StreamLease> {
    if (this.closed) throw streamLeasesUnavailable();
    if ((this.principals.get(input.principalKey)?.size ?? 0) >= this.settings.principalCap) {
      throw streamCapReached('principal', this.settings.retryAfterSeconds);
    }
    if ((this.rooms.get(input.roomKey)?.size ?? 0) >= this.settings.roomCap) {
      throw streamCapReached('room', this.settings.retryAfterSeconds);
    }
    return this.hold([
      [this.principals, input.principalKey],
      [this.rooms, input.roomKey],
    ]);
  }

  async acquireInbox(input: { principalKey: string }): Promise<StreamLease> {
    if (this.closed) throw streamLeasesUnavailable();
    if ((this.inboxes.get(input.principalKey)?.size ?? 0) >= this.settings.inboxPrincipalCap) {
      throw streamCapReached('inbox', this.settings.retryAfterSeconds);
    }
    return this.hold([[this.inboxes, input.principalKey]]);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const id of [...this.live.keys()]) this.release(id);
  }

  private hold(slots: Array<[Map<string, Set<string>>, string]>): StreamLease {
    const id = randomUUID();
    for (const [sets, key] of slots) add(sets, key, id);
    this.live.set(id, slots);
    return { id, release: async () => this.release(id) };
  }

  private release(id: string): void {
    const slots = this.live.get(id);
    if (!slots) return;
    this.live.delete(id);
    for (const [sets, key] of slots) remove(sets, key, id);
  }
}

function add(sets: Map<string, Set<string>>, key: string, id: string): void {
  const set = sets.get(key) ?? new Set<string>();
  set.add(id);
  sets.set(key, set);
}

function remove(sets: Map<string, Set<string>>, key: string, id: string): void {
  const set = sets.get(key);
  if (!set) return;
  set.delete(id);
  // Empty sets go, so memory follows the open streams rather than every principal ever seen.
  if (set.size === 0) sets.delete(key);
}
