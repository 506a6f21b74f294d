/**
 * SDK of the chat service: a typed REST client with safe retries, page iterators, and resumable
 * room and inbox stream consumers. Runs in Node >= 20 and browsers (fetch, streams, WebCrypto only).
 */
export { ChatClient, type AppendResult } from './chat-client.ts';
export { ChatEventStream, type StreamEndpoint } from './event-stream.ts';
export {
  ChatApiError,
  ChatError,
  ChatInsecureTransportError,
  ChatNetworkError,
  ChatStreamError,
  ChatTokenRejectedError,
  type ChatApiErrorInit,
  type ChatStreamStopReason,
} from './chat-errors.ts';
export { isLoopbackHost } from './credentials.ts';
export type {
  AppendOptions,
  BackoffOptions,
  BackwardPaginateOptions,
  ChatClientOptions,
  HistoryPageOptions,
  PageOptions,
  PaginateOptions,
  RequestOptions,
  RetryOptions,
  RoomRef,
  SearchOptions,
  SearchPageOptions,
  SearchScope,
  TokenProvider,
  TokenRequest,
} from './client-options.ts';
export type {
  FeedNotificationEvent,
  InboxNotificationEvent,
  InboxStreamTarget,
  PrincipalInboxStreamTarget,
  RoomMessageEvent,
  RoomStreamTarget,
  StreamOptions,
  StreamState,
  StreamStatus,
} from './stream-types.ts';
export type * from './contract-types.ts';
export { mentionBindingAt, utf8ByteLength, type MentionPrincipal } from './mention-spans.ts';
export { newUlid, ULID_PATTERN } from './ulid.ts';
export {
  ChatWebhookVerificationError,
  MemoryDeliveryIdStore,
  verifyWebhook,
  WEBHOOK_HEADERS,
  type DeliveryIdStore,
  type WebhookDelivery,
  type WebhookRefusal,
  type WebhookVerifyOptions,
} from './webhook-verifier.ts';
