import type { components, operations } from './generated/openapi.ts';

type Schemas = components['schemas'];

/** Room metadata (spec 2, RoomResponse); a virtual room has `persisted` = false. */
export type RoomResponse = Schemas['RoomResponse'];
/** One message in its REST and SSE form (spec 2, MessageResponse). */
export type MessageResponse = Schemas['MessageResponse'];
/** One inbox notification (spec 2, NotificationResponse). */
export type NotificationResponse = Schemas['NotificationResponse'];
/** One page of messages, oldest first; follow `nextCursor` until it is null. */
export type MessagePageResponse = Schemas['MessagePageResponse'];
/**
 * A run of consecutive messages, oldest first, with each one's durable cursor (`cursors[i]` is
 * `items[i]`'s), from the history extension; `olderCursor` / `newerCursor` continue it.
 */
export type MessageHistoryPageResponse = Schemas['MessageHistoryPageResponse'];
/** One page of the inbox, with the caller's `acknowledgedCursor` checkpoint. */
export type InboxPageResponse = Schemas['InboxPageResponse'];
/** One page of search results (the search extension); follow `nextCursor` until it is null. */
export type SearchPageResponse = Schemas['SearchPageResponse'];
/**
 * One message a search found: the message, its room (`roomId`, `branchId` null for the repository
 * room), its durable `cursor` in that room (the history read's `at=` opens the room at it) and
 * `highlights`, up to 3 fragments of the body as runs of plain text.
 */
export type SearchResult = Schemas['SearchResult'];
/** A run of plain text of a highlight fragment, `match` true for what the query matched; render it with your own escaping. */
export type SearchHighlightRun = Schemas['SearchHighlightRun'];
/** The order of search results: `relevance` or `newest`. */
export type SearchOrder = components['parameters']['SearchOrder'];
/** Body of an append. */
export type AppendMessageRequest = Schemas['AppendMessageRequest'];
/** A structured mention of a human or bot in an append. */
export type MentionBinding = Schemas['MentionBinding'];
/** Body of an inbox acknowledgement: `throughCursor`, and `expectedCursor` for compare-and-set. */
export type AcknowledgeInboxRequest = Schemas['AcknowledgeInboxRequest'];
/** Result of an inbox acknowledgement. */
export type AcknowledgeInboxResponse = Schemas['AcknowledgeInboxResponse'];
/** The spec's error envelope `{ error: { code, message, requestId } }`. */
export type ErrorEnvelope = Schemas['ErrorEnvelope'];
/** Data of a `heartbeat` event. */
export type HeartbeatEventData = Schemas['HeartbeatEventData'];
/** Data of a `handoff` event. */
export type HandoffEventData = Schemas['HandoffEventData'];
/** Data of a `reauthorize` event. */
export type ReauthorizeEventData = Schemas['ReauthorizeEventData'];

/** The operationIds of the contract; the client has one method per operation. */
export type OperationId = keyof operations;

export type { components, operations, paths } from './generated/openapi.ts';
