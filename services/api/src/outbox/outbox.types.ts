import type { CommittedMessage } from '@chat/wire-format';

/** A just-committed message: its outbox entry, what the backbone events need, and its MessageResponse JSON. */
export interface CommittedEntry extends CommittedMessage {
  outboxId: number;
  payload: string;
}

/**
 * Hands a just-committed message to the backbone. It never throws: a message it fails to publish
 * stays in the outbox, and the relay publishes it later.
 */
export interface CommittedMessagePublisher {
  /** Resolves once the backbone took the entry, or once that attempt failed; never rejects (callers need not wait). */
  publishCommitted(entry: CommittedEntry): Promise<void>;
}

export interface OutboxSettings {
  /** Entries younger than this are left to the publisher of their own request. @defaultValue 2000 */
  graceMs: number;
  /** Pause between relay sweeps. @defaultValue 1000 */
  intervalMs: number;
  /** Entries per relay sweep. @defaultValue 500 */
  batchSize: number;
  /**
   * How long published entries wait before their outbox rows are deleted, so that one statement
   * clears many batches. Must stay well below `graceMs`, or the relay would publish them again
   * (harmless, but wasted). @defaultValue 50
   */
  removalDelayMs: number;
}

export const DEFAULT_OUTBOX_SETTINGS: OutboxSettings = { graceMs: 2000, intervalMs: 1000, batchSize: 500, removalDelayMs: 50 };
