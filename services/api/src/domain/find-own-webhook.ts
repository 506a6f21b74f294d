import type { VerifiedPrincipal } from '@chat/authz-client';
import { AppError, isCanonicalUlid } from '@chat/contracts';
import type { Store, WebhookRow } from '@chat/store';
import { feedPrincipalOf } from './list-principal-inbox.ts';

/**
 * The caller's webhook `webhookId`. Another principal's webhook gets the answer a webhook that does
 * not exist gets, RESOURCE_NOT_FOUND, so webhook IDs tell a caller nothing about other principals.
 */
export async function findOwnWebhook(store: Store, principal: VerifiedPrincipal, webhookId: string): Promise<WebhookRow> {
  const row = isCanonicalUlid(webhookId) ? await store.webhooks.find(webhookId) : null;
  const owner = feedPrincipalOf(principal);
  if (!row || row.principalKind !== owner.principalKind || row.principalId !== owner.principalId) {
    throw new AppError('RESOURCE_NOT_FOUND', 'You have no webhook of this ID.');
  }
  return row;
}
