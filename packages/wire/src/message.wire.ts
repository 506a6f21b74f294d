import { SANITIZED_RENDER_POLICY, type MessageResponse } from '@chat/contracts';
import type { MessageRow } from './schema.ts';

/**
 * The wire form of a stored message, shared by REST responses, the outbox payload and stream
 * replay, so every path shows a message identically.
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
