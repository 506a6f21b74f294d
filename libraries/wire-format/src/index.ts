export { toMessageResponse, messageJson } from './message.wire.ts';
export {
  feedCursorBinding,
  inboxCursorBinding,
  parseStoredNotification,
  storedNotificationJson,
  toNotificationResponse,
  withInboxPosition,
} from './notification.wire.ts';
export {
  committedMessageEvents,
  committedMessageEventsFromPayload,
  parseMentionEventData,
  storedMessageEvents,
  type CommittedMessage,
} from './message-events.ts';
