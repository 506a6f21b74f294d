export { toMessageResponse, messageJson } from './message.wire.ts';
export {
  feedCursorBinding,
  inboxCursorBinding,
  parseFeedEntry,
  parseStoredNotification,
  storedNotificationJson,
  toNotificationResponse,
  withInboxPosition,
  type FeedEntry,
} from './notification.wire.ts';
export {
  committedMessageEvents,
  committedMessageEventsFromPayload,
  parseMentionEventData,
  storedMessageEvents,
  type CommittedMessage,
} from './message-events.ts';
