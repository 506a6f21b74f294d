import type { NewMessage } from '@chat/store';
import { ulid } from 'ulid';

/** Message `i` from u_alice as the store takes it, with the given mentions (none by default). */
export function newMessage(i: number, mentions: NewMessage['mentions'] = null): NewMessage {
  const body = `m${i}`;
  return {
    senderKind: 'user',
    senderId: 'u_alice',
    requestId: ulid(),
    idempotencyKey: ulid(),
    bodyMarkdown: body,
    bodyBytes: Buffer.byteLength(body),
    renderedHtml: `<p>${body}</p>\n`,
    mentions,
    authorizationDecisionId: null,
    authorizingSubjectId: null,
    authorizingSubjectKind: null,
    botCredentialId: null,
    botGrantId: null,
  };
}
