export { toMessageResponse, messageJson } from './message.wire.ts';
export {
  inboxCursorScope,
  parseStoredNotification,
  storedNotificationJson,
  toNotificationResponse,
  toStoredNotification,
  withInboxPosition,
} from './notification.wire.ts';
export {
  committedMessageEvents,
  committedMessageEventsFromPayload,
  parseMentionEventData,
  storedMessageEvents,
  type CommittedMessage,
  type MentionEventData,
} from './message-events.ts';
