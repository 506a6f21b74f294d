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
  | { kind: 'sealed' }
  /** The append's budget (`AppendOptions.rate`) was spent and its key is not stored: nothing was appended. */
  | { kind: 'rate_limited' };

/**
 * One budget of the append rate window (spec section 8) in one fixed window: a sender in a room, or
 * a sender across rooms (`roomKey` '*'). Windows are placed by the caller's clock.
 */
export interface AppendRateBudget {
  senderKind: 'user' | 'bot';
  senderId: string;
  /** The room's scope key, or '*' for a budget across rooms. */
  roomKey: string;
  /** Start of the window, in milliseconds since the epoch. */
  windowStartMs: number;
  /** Units the budget holds per window. */
  limit: number;
}

export interface AppendOptions {
  /** ID for the room if this append creates it. */
  newRoomId: string;
  now: Date;
  /**
   * The budget this append takes one unit of, in the append's own transaction; a replay, a sealed
   * room or a failed append takes none. Absent when the caller took the unit already (see
   * `RateWindowRepository.take`) or no limit applies.
   */
  rate?: AppendRateBudget;
}

/** One append as the batcher queues it and the append statement takes it. */
export interface PendingAppend {
  scope: RoomScope;
  message: NewMessage;
  options: AppendOptions;
}
