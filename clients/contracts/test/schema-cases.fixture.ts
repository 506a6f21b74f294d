// Test data shared by the schema tests and the OpenAPI/ajv tests. The field lists restate spec
// section 2 by hand, so a schema that drifts from the spec makes those tests fail.
import type { z } from 'zod';
import * as contracts from '../src/index.ts';

const REPO = '01J9ZQ3V0C6M4WB7X8Y9Z0ABCD';
const BRANCH = '01J9ZQ3V0C6M4WB7X8Y9Z0ABCE';
const TIME = '2025-03-01T12:00:00.123Z';

interface SchemaCase {
  /** Component id in the OpenAPI document. */
  id: string;
  schema: z.ZodType;
  /** A valid value with every property set. */
  full: Record<string, unknown>;
  required: string[];
  /** Optional properties that also accept null. */
  nullableOptional: string[];
  /** Optional properties that must not be null. */
  optionalOnly: string[];
  /** Values of a property that must be rejected. */
  invalid: Array<[string, unknown]>;
}

const mention = { principalKind: 'human', principalId: 'u_alice', startByte: 0, endByte: 6 };
const attribution = {
  authorizationDecisionId: 'd_1', authorizingSubjectId: 'o_acme', authorizingSubjectKind: 'organization',
  botCredentialId: 'c_1', botGrantId: 'g_1',
};
const storedMessage = {
  messageId: '01J9ZQ3V0C6M4WB7X8Y9Z0MSG1', roomId: '01J9ZQ3V0C6M4WB7X8Y9Z0ROOM', repositoryId: REPO,
  senderKind: 'bot', senderId: 'b_ci', requestId: 'req-1', bodyMarkdown: '@alice hi', bodyBytes: 9,
  createdAt: TIME, idempotencyKey: '01J9ZQ3V0C6M4WB7X8Y9Z0IDEM', mentions: [mention], branchId: BRANCH, ...attribution,
};
const messageResponse = { ...storedMessage, renderPolicy: 'sanitized_markdown_html_v1', renderedHtml: '<p>@alice hi</p>' };
const messageRequired = [
  'messageId', 'roomId', 'repositoryId', 'senderKind', 'senderId', 'requestId', 'bodyMarkdown', 'bodyBytes',
  'createdAt', 'idempotencyKey',
];
const messageNullable = [
  'branchId', 'authorizationDecisionId', 'authorizingSubjectId', 'authorizingSubjectKind', 'botCredentialId', 'botGrantId',
];
const messageInvalid: Array<[string, unknown]> = [
  ['senderKind', 'human'], ['bodyBytes', -1], ['bodyBytes', 1.5], ['bodyBytes', 2 ** 31], ['createdAt', '2025-03-01'],
  ['createdAt', '2025-03-01T12:00:00'], ['repositoryId', REPO.toLowerCase()], ['bodyMarkdown', ''],
  ['bodyMarkdown', 'x'.repeat(16_385)], ['authorizingSubjectKind', 'bot'], ['mentions', [{ ...mention, extra: 1 }]],
  ['mentions', [{ ...mention, startByte: -1 }]],
];
const storedNotification = {
  notificationId: 'n_1', targetKind: 'human', targetId: 'u_alice', repositoryId: REPO, roomId: 'r_1', messageId: 'm_1',
  senderKind: 'user', senderId: 'u_bob', spans: [{ startByte: 0, endByte: 6 }], createdAt: '2025-03-01T13:00:00+02:00',
  branchId: BRANCH,
};
const notificationRequired = [
  'notificationId', 'targetKind', 'targetId', 'repositoryId', 'roomId', 'messageId', 'senderKind', 'senderId', 'spans', 'createdAt',
];
const notificationInvalid: Array<[string, unknown]> = [
  ['targetKind', 'user'], ['spans', [{ startByte: 0 }]], ['spans', [{ startByte: 0, endByte: 1, principalId: 'x' }]],
];

const webhook = { webhookId: REPO, url: 'https://bot.example/hook', createdAt: TIME };
const deadLetter = {
  deliveryId: `${REPO}.n_1`, state: 'dead', attempts: 8, lastError: 'HTTP 500', deadAt: TIME,
  notification: { ...storedNotification, cursor: 'c', acknowledged: false },
};

export const SCHEMA_CASES: SchemaCase[] = [
  {
    id: 'RoomResponse', schema: contracts.RoomResponseSchema,
    full: {
      repositoryId: REPO, kind: 'branch', state: 'sealed', persisted: true, messageCount: 3, branchId: BRANCH, roomId: 'r_1',
      createdAt: TIME, lastMessageAt: TIME, sealedAt: TIME, version: 7,
    },
    required: ['repositoryId', 'kind', 'state', 'persisted', 'messageCount'],
    nullableOptional: ['branchId', 'roomId', 'createdAt', 'lastMessageAt', 'sealedAt', 'version'],
    optionalOnly: [],
    invalid: [['kind', 'org'], ['state', 'archived'], ['persisted', 'false'], ['messageCount', -1], ['version', -1], ['version', 0.5], ['sealedAt', 'yesterday']],
  },
  { id: 'Message', schema: contracts.MessageSchema, full: storedMessage, required: messageRequired, nullableOptional: messageNullable, optionalOnly: ['mentions'], invalid: messageInvalid },
  {
    id: 'MessageResponse', schema: contracts.MessageResponseSchema, full: messageResponse,
    required: [...messageRequired, 'renderPolicy', 'renderedHtml'], nullableOptional: messageNullable, optionalOnly: ['mentions'],
    invalid: [...messageInvalid, ['renderPolicy', null], ['renderedHtml', 1]],
  },
  { id: 'MentionBinding', schema: contracts.MentionBindingSchema, full: mention, required: ['principalKind', 'principalId', 'startByte', 'endByte'], nullableOptional: [], optionalOnly: [], invalid: [['principalKind', 'user'], ['endByte', -1], ['startByte', '0']] },
  { id: 'MentionSpan', schema: contracts.MentionSpanSchema, full: { startByte: 1, endByte: 2 }, required: ['startByte', 'endByte'], nullableOptional: [], optionalOnly: [], invalid: [['startByte', -1], ['endByte', 2 ** 31]] },
  { id: 'Notification', schema: contracts.NotificationSchema, full: storedNotification, required: notificationRequired, nullableOptional: ['branchId'], optionalOnly: [], invalid: notificationInvalid },
  {
    id: 'NotificationResponse', schema: contracts.NotificationResponseSchema,
    full: { ...storedNotification, cursor: 'opaque', acknowledged: false },
    required: [...notificationRequired, 'cursor', 'acknowledged'], nullableOptional: ['branchId'], optionalOnly: [],
    invalid: [...notificationInvalid, ['acknowledged', 0], ['cursor', null]],
  },
  {
    id: 'FeedNotificationResponse', schema: contracts.FeedNotificationResponseSchema,
    full: { ...storedNotification, cursor: 'opaque', acknowledged: false, message: messageResponse },
    required: [...notificationRequired, 'cursor', 'acknowledged'], nullableOptional: ['branchId'], optionalOnly: ['message'],
    invalid: [...notificationInvalid, ['acknowledged', 0], ['message', storedMessage], ['message', null]],
  },
  {
    id: 'MessagePageResponse', schema: contracts.MessagePageResponseSchema, full: { items: [messageResponse], nextCursor: 'c' },
    required: ['items'], nullableOptional: ['nextCursor'], optionalOnly: [], invalid: [['items', [storedMessage]], ['items', null]],
  },
  {
    id: 'MessageHistoryPageResponse', schema: contracts.MessageHistoryPageResponseSchema,
    full: { items: [messageResponse], cursors: ['c'], olderCursor: 'c', newerCursor: null },
    required: ['items', 'cursors'], nullableOptional: ['olderCursor', 'newerCursor'], optionalOnly: [],
    invalid: [['items', [storedMessage]], ['cursors', [1]], ['olderCursor', 5]],
  },
  {
    id: 'SearchHighlightRun', schema: contracts.SearchHighlightRunSchema, full: { text: 'parse_config', match: true },
    required: ['text', 'match'], nullableOptional: [], optionalOnly: [], invalid: [['match', 'yes'], ['text', 5]],
  },
  {
    id: 'SearchResult', schema: contracts.SearchResultSchema,
    full: { message: messageResponse, roomId: 'r1', branchId: BRANCH, cursor: 'c', highlights: [[{ text: 'a ', match: false }, { text: 'b', match: true }]] },
    required: ['message', 'roomId', 'cursor', 'highlights'], nullableOptional: ['branchId'], optionalOnly: [],
    invalid: [['message', storedMessage], ['branchId', 'main'], ['highlights', [{ text: 'a', match: true }]], ['cursor', 1]],
  },
  {
    id: 'SearchPageResponse', schema: contracts.SearchPageResponseSchema,
    full: { items: [{ message: messageResponse, roomId: 'r1', branchId: null, cursor: 'c', highlights: [] }], nextCursor: 'n' },
    required: ['items'], nullableOptional: ['nextCursor'], optionalOnly: [], invalid: [['items', [messageResponse]], ['nextCursor', 3]],
  },
  {
    id: 'InboxPageResponse', schema: contracts.InboxPageResponseSchema,
    full: { items: [{ ...storedNotification, cursor: 'c', acknowledged: true }], nextCursor: 'c2', acknowledgedCursor: 'c' },
    required: ['items'], nullableOptional: ['nextCursor', 'acknowledgedCursor'], optionalOnly: [], invalid: [['items', [storedNotification]]],
  },
  {
    id: 'AppendMessageRequest', schema: contracts.AppendMessageRequestSchema, full: { bodyMarkdown: '@alice hi', mentions: [mention] },
    required: ['bodyMarkdown'], nullableOptional: [], optionalOnly: ['mentions'], invalid: [['bodyMarkdown', 5], ['mentions', [{ principalKind: 'human' }]]],
  },
  { id: 'AcknowledgeInboxRequest', schema: contracts.AcknowledgeInboxRequestSchema, full: { throughCursor: 'c', expectedCursor: 'b' }, required: ['throughCursor'], nullableOptional: ['expectedCursor'], optionalOnly: [], invalid: [['throughCursor', null]] },
  { id: 'AcknowledgeInboxResponse', schema: contracts.AcknowledgeInboxResponseSchema, full: { acknowledgedCursor: 'c', replayed: true }, required: ['acknowledgedCursor', 'replayed'], nullableOptional: [], optionalOnly: [], invalid: [['acknowledgedCursor', null], ['replayed', 'yes']] },
  {
    id: 'Webhook', schema: contracts.WebhookSchema, full: webhook,
    required: ['webhookId', 'url', 'createdAt'], nullableOptional: [], optionalOnly: [],
    invalid: [['webhookId', 'wh_1'], ['createdAt', 'today'], ['url', 5], ['secret', 'not shown']],
  },
  {
    id: 'CreateWebhookRequest', schema: contracts.CreateWebhookRequestSchema, full: { url: 'https://bot.example/hook', secret: 'sixteen-chars-ok' },
    required: ['url'], nullableOptional: [], optionalOnly: ['secret'],
    invalid: [['url', ''], ['url', `https://bot.example/${'x'.repeat(2048)}`], ['secret', 'fifteen-chars-x'], ['secret', 'x'.repeat(257)], ['secret', 'sixteen-chars-\u00e9!'], ['secret', 'line\nbreak-sixteen']],
  },
  {
    id: 'CreateWebhookResponse', schema: contracts.CreateWebhookResponseSchema, full: { webhook, secret: 's3cret' },
    required: ['webhook', 'secret'], nullableOptional: [], optionalOnly: [], invalid: [['webhook', { ...webhook, secret: 's' }], ['secret', 1]],
  },
  {
    id: 'WebhookListResponse', schema: contracts.WebhookListResponseSchema, full: { items: [webhook] },
    required: ['items'], nullableOptional: [], optionalOnly: [], invalid: [['items', [{ webhookId: REPO }]]],
  },
  {
    id: 'WebhookDeadLetter', schema: contracts.WebhookDeadLetterSchema, full: deadLetter,
    required: ['deliveryId', 'state', 'attempts', 'lastError', 'deadAt', 'notification'], nullableOptional: [], optionalOnly: [],
    invalid: [['state', 'delivered'], ['attempts', -1], ['deadAt', 'then'], ['notification', storedNotification]],
  },
  {
    id: 'WebhookDeadLetterPageResponse', schema: contracts.WebhookDeadLetterPageResponseSchema, full: { items: [deadLetter], nextCursor: 'c' },
    required: ['items'], nullableOptional: ['nextCursor'], optionalOnly: [], invalid: [['items', [storedNotification]], ['nextCursor', 1]],
  },
  {
    id: 'RedeliverWebhookRequest', schema: contracts.RedeliverWebhookRequestSchema, full: { deliveryIds: [`${REPO}.n_1`] },
    required: [], nullableOptional: [], optionalOnly: ['deliveryIds'],
    invalid: [['deliveryIds', []], ['deliveryIds', Array.from({ length: 101 }, (_, i) => `d${i}`)], ['deliveryIds', ['']], ['deliveryIds', [1]]],
  },
  {
    id: 'RedeliverWebhookResponse', schema: contracts.RedeliverWebhookResponseSchema, full: { redelivering: ['d1'] },
    required: ['redelivering'], nullableOptional: [], optionalOnly: [], invalid: [['redelivering', [1]]],
  },
  { id: 'ErrorEnvelope', schema: contracts.ErrorEnvelopeSchema, full: { error: { code: 'CURSOR_INVALID', message: 'bad cursor', requestId: 'r1' } }, required: ['error'], nullableOptional: [], optionalOnly: [], invalid: [['error', { code: 'CURSOR_INVALID', message: 'm' }]] },
  { id: 'ErrorBody', schema: contracts.ErrorBodySchema, full: { code: 'ROOM_SEALED', message: 'sealed', requestId: 'r1' }, required: ['code', 'message', 'requestId'], nullableOptional: [], optionalOnly: [], invalid: [['code', 'NOT_A_CODE'], ['requestId', null]] },
  { id: 'HeartbeatEventData', schema: contracts.HeartbeatEventDataSchema, full: { serverTime: TIME }, required: ['serverTime'], nullableOptional: [], optionalOnly: [], invalid: [['serverTime', 'now']] },
  { id: 'HandoffEventData', schema: contracts.HandoffEventDataSchema, full: { reason: 'stream_rotation' }, required: ['reason'], nullableOptional: [], optionalOnly: [], invalid: [['reason', 'shutdown']] },
  { id: 'ReauthorizeEventData', schema: contracts.ReauthorizeEventDataSchema, full: { reason: 'access_changed' }, required: ['reason'], nullableOptional: [], optionalOnly: [], invalid: [['reason', ''], ['reason', 'Access Changed']] },
];

/** The enumerations of spec section 2 with their exact values. */
export const ENUM_CASES: Array<{ id: string; schema: z.ZodType; values: string[] }> = [
  { id: 'RoomKind', schema: contracts.RoomKindSchema, values: ['repository', 'branch'] },
  { id: 'RoomState', schema: contracts.RoomStateSchema, values: ['active', 'sealed'] },
  { id: 'SenderKind', schema: contracts.SenderKindSchema, values: ['user', 'bot'] },
  { id: 'SubjectKind', schema: contracts.SubjectKindSchema, values: ['user', 'organization'] },
  { id: 'MentionPrincipalKind', schema: contracts.MentionPrincipalKindSchema, values: ['human', 'bot'] },
  { id: 'WebhookDeadLetterState', schema: contracts.WebhookDeadLetterStateSchema, values: ['dead', 'redelivering'] },
];

/** Every variant a test should accept or reject, labelled. */
export function variants(c: SchemaCase): Array<{ label: string; value: unknown; valid: boolean }> {
  const out: Array<{ label: string; value: unknown; valid: boolean }> = [
    { label: 'every property set', value: c.full, valid: true },
    { label: 'required properties only', value: pick(c.full, c.required), valid: true },
    { label: 'an unknown property', value: { ...c.full, unexpected: true }, valid: false },
    { label: 'not an object', value: [c.full], valid: false },
    { label: 'null', value: null, valid: false },
  ];
  for (const key of c.required) out.push({ label: `missing ${key}`, value: omit(c.full, key), valid: false });
  for (const key of c.required) out.push({ label: `null ${key}`, value: { ...c.full, [key]: null }, valid: false });
  for (const key of c.nullableOptional) out.push({ label: `null ${key}`, value: { ...c.full, [key]: null }, valid: true });
  for (const key of [...c.nullableOptional, ...c.optionalOnly]) out.push({ label: `absent ${key}`, value: omit(c.full, key), valid: true });
  for (const key of c.optionalOnly) out.push({ label: `null ${key}`, value: { ...c.full, [key]: null }, valid: false });
  for (const [key, bad] of c.invalid) out.push({ label: `${key} = ${JSON.stringify(bad)?.slice(0, 40)}`, value: { ...c.full, [key]: bad }, valid: false });
  return out;
}

function pick(source: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, source[k]]));
}

function omit(source: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _dropped, ...rest } = source;
  return rest;
}
