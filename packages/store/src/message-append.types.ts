import type { RoomScope } from './room.repository.ts';
import type { MessageRow, StoredMention } from './schema.ts';

/** Everything about a new message that the caller decides; IDs, times and seq are the store's. */
export interface NewMessage {
  senderKind: 'user' | 'bot';
  senderId: string;
  requestId: string;
  idempotencyKey: string;
  bodyMarkdown: string;
  bodyBytes: number;
  renderedHtml: string;
  mentions: StoredMention[] | null;
  authorizationDecisionId: string | null;
  authorizingSubjectId: string | null;
  authorizingSubjectKind: 'user' | 'organization' | null;
  botCredentialId: string | null;
  botGrantId: string | null;
}

export type AppendOutcome =
  | { kind: 'created'; message: MessageRow; outboxId: number }
  | { kind: 'replayed'; message: MessageRow }
  | { kind: 'sealed' };

export interface AppendOptions {
  /** ID for the room if this append creates it. */
  newRoomId: string;
  now: Date;
}

/** One append as the batcher queues it and the append statement takes it. */
export interface PendingAppend {
  scope: RoomScope;
  message: NewMessage;
  options: AppendOptions;
}
