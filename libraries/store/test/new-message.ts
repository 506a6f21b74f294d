import { ulid } from 'ulid';
import type { NewMessage } from '../src/index.ts';

/** A plain message by `u_alice`, with a fresh request ID and idempotency key; `overrides` change any field. */
export function newMessage(overrides: Partial<NewMessage> = {}): NewMessage {
  return {
    senderKind: 'user',
    senderId: 'u_alice',
    requestId: ulid(),
    idempotencyKey: ulid(),
    bodyMarkdown: 'hello',
    bodyBytes: 5,
    renderedHtml: '<p>hello</p>\n',
    mentions: null,
    authorizationDecisionId: ulid(),
    authorizingSubjectId: 'u_alice',
    authorizingSubjectKind: 'user',
    botCredentialId: null,
    botGrantId: null,
    ...overrides,
  };
}
