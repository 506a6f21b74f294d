import type { VerifiedPrincipal } from '@chat/authz-client';
import { AppError, MAX_REDELIVERY_IDS, RedeliverWebhookRequestSchema, type RedeliverWebhookResponse } from '@chat/contracts';
import type { Store } from '@chat/store';
import { findOwnWebhook } from './find-own-webhook.ts';

export interface RedeliverWebhookDeliveriesInput {
  principal: VerifiedPrincipal;
  webhookId: string;
  /** The parsed JSON body, not yet validated. */
  body: unknown;
}

/**
 * redeliverWebhookDeliveries (extension): queues the named dead letters of the caller's webhook (all
 * of them when `deliveryIds` is absent) for delivery again, under their original delivery IDs. The
 * body is a RedeliverWebhookRequest (else REQUEST_INVALID); the webhook is the caller's (else
 * RESOURCE_NOT_FOUND). The answer lists the IDs now queued: a named ID that is not a dead letter of
 * this webhook waiting in state `dead` (unknown, another webhook's, already redelivering) is not.
 */
export async function redeliverWebhookDeliveries(
  deps: { store: Store; clock: () => Date },
  input: RedeliverWebhookDeliveriesInput,
): Promise<RedeliverWebhookResponse> {
  const parsed = RedeliverWebhookRequestSchema.safeParse(input.body);
  if (!parsed.success) {
    throw new AppError('REQUEST_INVALID', `The body must be a RedeliverWebhookRequest: \`deliveryIds\`, when given, is 1 to ${MAX_REDELIVERY_IDS} delivery IDs.`);
  }
  const webhook = await findOwnWebhook(deps.store, input.principal, input.webhookId);
  const { deliveryIds } = parsed.data;
  const redelivering = await deps.store.webhooks.requestRedelivery(webhook.webhookId, { ...(deliveryIds ? { deliveryIds } : {}), now: deps.clock() });
  return { redelivering };
}
