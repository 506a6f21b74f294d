import type { VerifiedPrincipal } from '@chat/authz-client';
import type { WebhookListResponse } from '@chat/contracts';
import type { Store } from '@chat/store';
import { presentWebhook } from '../presenters/webhook.presenter.ts';
import { feedPrincipalOf } from './list-principal-inbox.ts';

/** listWebhooks (extension): the caller's webhooks, oldest first, without their secrets. */
export async function listWebhooks(deps: { store: Store }, input: { principal: VerifiedPrincipal }): Promise<WebhookListResponse> {
  const rows = await deps.store.webhooks.listByPrincipal(feedPrincipalOf(input.principal));
  return { items: rows.map(presentWebhook) };
}
