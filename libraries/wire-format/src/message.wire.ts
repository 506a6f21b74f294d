import { SANITIZED_RENDER_POLICY, type MessageResponse } from '@chat/contracts';
import type { MessageRow } from '@chat/store';

/**
 * The wire form of a stored message, shared by REST responses, the backbone payload (published
 * after commit and by the outbox relay) and stream replay, so every path shows a message
 * identically, byte for byte once serialized (the key order here is the JSON's).
 */
export function toMessageResponse(row: MessageRow): MessageResponse {
  const response: MessageResponse = {
    messageId: row.messageId,
    roomId: row.roomId,
    repositoryId: row.repositoryId,
    senderKind: row.senderKind,
    senderId: row.senderId,
    requestId: row.requestId,
    bodyMarkdown: row.bodyMarkdown,
    bodyBytes: row.bodyBytes,
    createdAt: row.createdAt.toISOString(),
    idempotencyKey: row.idempotencyKey,
    renderPolicy: SANITIZED_RENDER_POLICY,
    renderedHtml: row.renderedHtml,
    branchId: row.branchId,
    authorizationDecisionId: row.authorizationDecisionId,
    authorizingSubjectId: row.authorizingSubjectId,
    authorizingSubjectKind: row.authorizingSubjectKind,
    botCredentialId: row.botCredentialId,
    botGrantId: row.botGrantId,
  };
  if (row.mentions && row.mentions.length > 0) response.mentions = row.mentions;
  return response;
}

/** A stored message as its MessageResponse JSON: the data of its `message` events and backbone entries. */
export function messageJson(row: MessageRow): string {
  return JSON.stringify(toMessageResponse(row));
}
