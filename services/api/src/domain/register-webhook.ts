import { randomBytes } from 'node:crypto';
import type { VerifiedPrincipal } from '@chat/authz-client';
import { AppError, CreateWebhookRequestSchema, MAX_WEBHOOK_URL_LENGTH, newUlid, type CreateWebhookResponse } from '@chat/contracts';
import { WebhookLimitError, type Store } from '@chat/store';
import { OutboundAddressRefusedError, type OutboundAddressGuard } from '@chat/webhooks';
import { presentWebhook } from '../presenters/webhook.presenter.ts';
import { feedPrincipalOf } from './list-principal-inbox.ts';

/** What a registration is checked against. */
export interface WebhookRegistrationPolicy {
  /** The outbound address rule, the notifier's own: a URL it would refuse to send to is refused here. */
  addresses: OutboundAddressGuard;
  /** Webhooks one principal may hold. */
  perPrincipal: number;
}

/** Random bytes of a secret the service makes: 256 bits, as long as the HMAC-SHA256 key's block needs. */
const GENERATED_SECRET_BYTES = 32;

export interface RegisterWebhookInput {
  principal: VerifiedPrincipal;
  /** The parsed JSON body, not yet validated. */
  body: unknown;
}

/**
 * createWebhook (extension): registers a webhook of the caller's, which receives the notifications
 * written from now on. The body is a CreateWebhookRequest (else REQUEST_INVALID); the URL must pass
 * the outbound address rule (else REQUEST_INVALID saying why); the secret is the one given or 32
 * random bytes, and this answer is the only one that shows it. Past the per-principal limit the
 * registration is RESOURCE_CONFLICT.
 */
export async function registerWebhook(
  deps: { store: Store; clock: () => Date; webhooks: WebhookRegistrationPolicy },
  input: RegisterWebhookInput,
): Promise<CreateWebhookResponse> {
  const parsed = CreateWebhookRequestSchema.safeParse(input.body);
  if (!parsed.success) {
    throw new AppError(
      'REQUEST_INVALID',
      `The body must be a CreateWebhookRequest: \`url\` of 1 to ${MAX_WEBHOOK_URL_LENGTH} characters and, optionally, \`secret\` of 16 to 256 printable ASCII characters.`,
    );
  }
  let url: URL;
  try {
    url = deps.webhooks.addresses.checkUrl(parsed.data.url);
  } catch (err) {
    if (err instanceof OutboundAddressRefusedError) throw new AppError('REQUEST_INVALID', `The webhook URL is refused: ${err.message}.`, { cause: err });
    throw err;
  }
  const secret = parsed.data.secret ?? randomBytes(GENERATED_SECRET_BYTES).toString('base64url');
  const now = deps.clock();
  try {
    const row = await deps.store.webhooks.create({
      webhookId: newUlid(now.getTime()),
      principal: feedPrincipalOf(input.principal),
      // The parsed form is what the notifier connects to, so it is what the caller is shown.
      url: url.href,
      secret,
      now,
      maxPerPrincipal: deps.webhooks.perPrincipal,
    });
    return { webhook: presentWebhook(row), secret };
  } catch (err) {
    if (err instanceof WebhookLimitError) throw new AppError('RESOURCE_CONFLICT', `You hold ${err.max} webhooks, as many as a principal may; delete one first.`, { cause: err });
    throw err;
  }
}
