/**
 * The attributes chat's spans carry: OpenTelemetry's semantic conventions where one fits (the stable
 * ones from the package, messaging ones by name, as they are still incubating), and `chat.*` for the
 * rest. docs/operations.md (Tracing) lists which span carries which.
 */
export {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';

export const ATTR_MESSAGING_SYSTEM = 'messaging.system';
export const ATTR_MESSAGING_DESTINATION_NAME = 'messaging.destination.name';
export const ATTR_MESSAGING_OPERATION_TYPE = 'messaging.operation.type';
export const ATTR_MESSAGING_BATCH_MESSAGE_COUNT = 'messaging.batch.message_count';
/** The backbone, as `messaging.system`: Redis Streams, or the all-in-one's in-process stand-in. */
export const MESSAGING_SYSTEM_BACKBONE = 'chat_backbone';

/** The request's `X-Request-Id`, which its log lines carry too. */
export const ATTR_REQUEST_ID = 'chat.request_id';
/** Core's operation: `authorize`, `resolveMentions`, `listRepositories`. */
export const ATTR_CORE_OPERATION = 'chat.core.operation';
/** Authorizations carried by the one HTTP call to core this authorization rode. */
export const ATTR_CORE_BATCH_SIZE = 'chat.core.batch_size';
/** `append`, or `hold` (the first step of an append with mentions, which takes its rate unit). */
export const ATTR_APPEND_STEP = 'chat.append.step';
/** Append steps carried by the one transaction this step rode. */
export const ATTR_APPEND_BATCH_SIZE = 'chat.append.batch_size';
/** What the append statement answered: `created`, `replayed`, `held`, `sealed`, `rate_limited`. */
export const ATTR_APPEND_OUTCOME = 'chat.append.outcome';
/** The backbone scope of an event: a room ID (messages, mentions) or an inbox key (notifications). */
export const ATTR_SCOPE_KEY = 'chat.scope_key';
/** The event's (or the message's) seq in its scope. */
export const ATTR_SEQ = 'chat.seq';
/** Outbox entries one relay sweep published. */
export const ATTR_RELAY_ENTRIES = 'chat.outbox.entries';
/** Streams of this gateway the event was handed to. */
export const ATTR_DELIVERY_STREAMS = 'chat.delivery.streams';
/** `delivered`, or why not: `late` (its streams have it already), `dropped` (past the held-event bound; read from the store with its gap), `closed`. */
export const ATTR_DELIVERY_OUTCOME = 'chat.delivery.outcome';
/** What the consumer's handler made of the event (the notifier: its fanout's outcome). */
export const ATTR_PROCESS_OUTCOME = 'chat.process.outcome';
