import type { CommitSpan } from '@chat/tracing';
import type { RoomScope } from './room.repository.ts';
import type { AppendRateLimit, PlacedBudget } from './append-rate-window.ts';
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
  /** The stored message of the same room, sender and idempotency key: the answer to an exact retry. */
  | { kind: 'replayed'; message: MessageRow }
  | { kind: 'sealed' }
  /** The append's budget is spent and its key is not stored: nothing was appended. */
  | { kind: 'rate_limited'; retryAfterMs: number };

/** What the hold step answers: the append may go on (`held`), or it is answered already. */
export type HoldOutcome = { kind: 'held'; hold: AppendHold } | Exclude<AppendOutcome, { kind: 'created' }>;

/**
 * A unit of the rate window held for an append that checks more before it is stored (an append with
 * mentions asks core about them): `release` gives it back, at most once, when the append will not go
 * on; the append itself (`AppendOptions.hold`) takes no second unit.
 */
export interface AppendHold {
  /** The budget the unit was taken from; undefined when no limit applies. */
  readonly budget: PlacedBudget | undefined;
  release(): Promise<void>;
}

export interface AppendOptions {
  /** ID for the room if this append creates it. */
  newRoomId: string;
  now: Date;
  /** The rate limit the append counts against, in its own transaction; absent when none applies. */
  rateLimit?: AppendRateLimit;
  /** Core reports the room sealed: the append records the seal, then answers an exact retry or refuses. */
  sealedByCore?: boolean;
  /** The hold taken by this append's first step. */
  hold?: AppendHold;
}

/** One step of an append as the batcher queues it and the append statement takes it. */
export interface PendingAppend {
  step: 'append' | 'hold';
  scope: RoomScope;
  message: NewMessage;
  options: AppendOptions;
  /** The budget the step counts against, placed at `options.now`, or the hold's. */
  budget: PlacedBudget | undefined;
  /** The step's span in its request's trace; undefined while tracing is off. */
  commit?: CommitSpan | undefined;
}

/** What the append statement answers for one step. */
export type StepOutcome = AppendOutcome | { kind: 'held' };
