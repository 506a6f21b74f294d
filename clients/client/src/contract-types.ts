import type { components, operations } from './generated/openapi.ts';

type Schemas = components['schemas'];

/** Room metadata (spec 2, RoomResponse); a virtual room has `persisted` = false. */
export type RoomResponse = Schemas['RoomResponse'];
/** One message in its REST and SSE form (spec 2, MessageResponse). */
export type MessageResponse = Schemas['MessageResponse'];
/** One inbox notification (spec 2, NotificationResponse). */
export type NotificationResponse = Schemas['NotificationResponse'];
/** A notification on the principal inbox stream, with its `message` when the stream was opened with `includeMessage`. */
export type FeedNotificationResponse = Schemas['FeedNotificationResponse'];
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
/** A webhook of the caller's (the webhooks extension): `webhookId`, `url`, `createdAt`; never its secret. */
export type Webhook = Schemas['Webhook'];
/** Body of a webhook registration: `url`, and optionally the signing `secret` (16–256 printable ASCII characters). */
export type CreateWebhookRequest = Schemas['CreateWebhookRequest'];
/** A registered webhook and its signing secret, which no later answer shows. */
export type CreateWebhookResponse = Schemas['CreateWebhookResponse'];
/** The caller's webhooks, oldest first. */
export type WebhookListResponse = Schemas['WebhookListResponse'];
/** A delivery every attempt of which failed, with its notification; `state` `dead` or `redelivering`. */
export type WebhookDeadLetter = Schemas['WebhookDeadLetter'];
/** `dead` (waits for a redelivery request) or `redelivering`. */
export type WebhookDeadLetterState = Schemas['WebhookDeadLetterState'];
/** One page of a webhook's dead letters, in the order they died; follow `nextCursor` until it is null. */
export type WebhookDeadLetterPageResponse = Schemas['WebhookDeadLetterPageResponse'];
/** Body of a redelivery request: `deliveryIds` (1–100), or none for every dead letter. */
export type RedeliverWebhookRequest = Schemas['RedeliverWebhookRequest'];
/** The delivery IDs queued for delivery again. */
export type RedeliverWebhookResponse = Schemas['RedeliverWebhookResponse'];
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
