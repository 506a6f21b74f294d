import type { VerifiedPrincipal } from '@chat/authz-client';
import { AppError, isCanonicalUlid } from '@chat/contracts';
import type { Store } from '@chat/store';
import { feedPrincipalOf } from './list-principal-inbox.ts';

/**
 * deleteWebhook (extension): removes the caller's webhook with its lanes and dead letters, so nothing
 * more is sent to it. The store removes only a webhook of the caller's, in one statement, so another
 * principal's webhook is RESOURCE_NOT_FOUND, as one that does not exist (or no longer does) is.
 */
export async function removeWebhook(deps: { store: Store }, input: { principal: VerifiedPrincipal; webhookId: string }): Promise<void> {
  const removed = isCanonicalUlid(input.webhookId) && (await deps.store.webhooks.remove(input.webhookId, feedPrincipalOf(input.principal)));
  if (!removed) throw new AppError('RESOURCE_NOT_FOUND', 'You have no webhook of this ID.');
}
