import type { CoreClient } from '@chat/authz-client';
import type { WebhookRow } from '@chat/store';

/**
 * Whether the webhook's principal may read the repository now, asked of core live (its mention
 * resolution: may this principal read the scope). A delivery is sent only when it may.
 * @throws AppError AUTHORIZATION_UNAVAILABLE when core cannot answer.
 */
export async function principalMayRead(core: CoreClient, webhook: WebhookRow, repositoryId: string): Promise<boolean> {
  const resolution = await core.resolveMentions({ repositoryId, targets: [{ kind: webhook.principalKind, id: webhook.principalId }] });
  return resolution.targets.some((t) => t.kind === webhook.principalKind && t.id === webhook.principalId && t.valid);
}
