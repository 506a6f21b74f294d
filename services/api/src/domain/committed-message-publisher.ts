import type { CommittedMessage } from '@chat/backbone';

/**
 * Hands a just-committed message (its outbox payload: the MessageResponse JSON) to the backbone. It never throws: a message it fails to publish
 * stays in the outbox, and the relay publishes it later.
 */
export interface CommittedMessagePublisher {
  /** Resolves once the backbone took the entry, or once that attempt failed; never rejects (callers need not wait). */
  publishCommitted(entry: CommittedEntry): Promise<void>;
}

/** A just-committed message: its outbox entry, what the backbone events need, and its MessageResponse JSON. */
export interface CommittedEntry extends CommittedMessage {
  outboxId: number;
  payload: string;
}
