/**
 * Hands a just-committed message (its outbox payload: the MessageResponse JSON) to the backbone. It never throws: a message it fails to publish
 * stays in the outbox, and the relay publishes it later.
 */
export interface CommittedMessagePublisher {
  /** Resolves once the backbone took the entry, or once that attempt failed; never rejects (callers need not wait). */
  publishCommitted(entry: { outboxId: number; roomId: string; seq: number; payload: string }): Promise<void>;
}
