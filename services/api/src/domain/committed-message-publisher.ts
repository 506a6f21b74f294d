/**
 * Hands a just-committed message (its outbox payload: the MessageResponse JSON) to the backbone. It never throws: a message it fails to publish
 * stays in the outbox, and the relay publishes it later.
 */
export interface CommittedMessagePublisher {
  publishCommitted(entry: { outboxId: number; roomId: string; seq: number; payload: string }): void;
}
