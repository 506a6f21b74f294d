export { openDatabase, databaseTargetFor, type Database, type DatabaseTarget, type ChatDb, type OpenDatabaseOptions } from './database.ts';
export { lockDataDir, DataDirInUseError, LOCK_FOLDER_NAME, type DataDirLock, type OwnerRecord } from './data-dir-lock.ts';
export { migrate, MigrationLockTimeoutError, type MigrateOptions, type MigrateResult } from './migrate.ts';
export { createStore, type Store } from './store.ts';
export type { PoolStats } from './pool-stats.ts';
export { roomScopeKey, type RoomScope, type RoomRepository } from './room.repository.ts';
export type { MessageRepository } from './message.repository.ts';
export type { MessageSearchQuery, SearchHit, SearchOrder, SearchPage, SearchPosition } from './message-search.ts';
export { highlightFragments, type HighlightRun } from './search-highlight.ts';
export type { NewMessage, AppendOutcome, AppendOptions, AppendHold, HoldOutcome } from './message-append.types.ts';
export { placeBudget, type AppendRateLimit, type AppendRateBudget, type PlacedBudget } from './append-rate-window.ts';
export type { RateWindowRepository } from './rate-window.repository.ts';
export type { OutboxRepository, OutboxEntry } from './outbox.repository.ts';
export type { ServiceKeyRepository } from './service-key.repository.ts';
export type { RoomRow, MessageRow, OutboxRow, StoredMention } from './schema.ts';
export { isStoreUnavailable, SearchTimeoutError, storeCall } from './store-errors.ts';
export { nextMessageId } from './monotonic-ulid.ts';
export { loadCursorCodec } from './cursor-keys.ts';
export { inboxKey, type InboxOwner, type InboxRepository } from './inbox.repository.ts';
export type { InboxRow, NotificationRow, StoredSpan } from './inbox.schema.ts';
export type {
  NotificationRepository,
  NewNotification,
  NotificationAppendOptions,
  NotificationAppendOutcome,
  CreatedNotification,
  FanoutRunMessage,
  FanoutRunOutcome,
  FeedPlacement,
} from './notification.repository.ts';
export {
  feedKey,
  FeedCheckpointStaleError,
  FeedPositionUnavailableError,
  type FeedPrincipal,
  type FeedNotificationRow,
  type FeedNotificationWithMessage,
  type FeedAcknowledgement,
  type FeedAcknowledgeOutcome,
  type PrincipalFeedRepository,
} from './principal-feed.repository.ts';
export type { PrincipalFeedRow } from './principal-feed.schema.ts';
export { FanoutSettledError } from './notification.repository.ts';
export type { MentionFanoutRepository, ClaimOptions, ClaimDueOptions } from './mention-fanout.repository.ts';
export type { MentionFanoutRow } from './mention-fanout.schema.ts';
export { MigrateEnvSchema, loadMigrateConfig, type MigrateConfig } from './migrate-config.ts';
export {
  WebhookLimitError,
  type WebhookRepository,
  type WebhookLaneKey,
  type WebhookLaneWork,
  type WebhookDeadLetter,
  type WebhookRedelivery,
  type DeadLetterPosition,
  type NewWebhook,
  type LaneClaim,
} from './webhook.repository.ts';
export type { WebhookRow, WebhookLaneRow, WebhookDeadLetterRow } from './webhook.schema.ts';
