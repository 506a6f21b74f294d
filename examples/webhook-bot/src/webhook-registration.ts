import type { ChatClient, Webhook } from '@chat/client';

/** The webhook the bot receives on, and the secret its deliveries are signed with. */
export interface BotWebhook {
  webhook: Webhook | undefined;
  secret: string;
  /** True when the webhook is this run's own (its secret lives in this process only): remove it at stop. */
  ownedByRun: boolean;
  /** What was done, for the log. */
  story: string;
}

/**
 * Makes sure the bot has a webhook at `url`. With a secret, a webhook of the bot's at that URL is
 * kept (it is taken to have been registered with that secret), or one is registered with it. Without
 * one, the bot registers a webhook of this run with a secret the service makes; an earlier webhook at
 * the URL is replaced, since no one can verify its deliveries any more (its secret was shown once,
 * to a run that is gone).
 */
export async function ensureWebhook(client: ChatClient, url: string, secret: string | undefined): Promise<BotWebhook> {
  // The service shows a URL as it parsed it; compare in that form.
  const wanted = new URL(url).href;
  const existing = (await client.listWebhooks()).find((w) => w.url === wanted);
  if (secret !== undefined) {
    if (existing) return { webhook: existing, secret, ownedByRun: false, story: `receiving on webhook ${existing.webhookId} at ${wanted}` };
    const created = await client.createWebhook({ url, secret });
    return { webhook: created.webhook, secret, ownedByRun: false, story: `registered webhook ${created.webhook.webhookId} at ${wanted}` };
  }
  let story = '';
  if (existing) {
    await client.deleteWebhook(existing.webhookId);
    story = `removed webhook ${existing.webhookId}, whose secret this run cannot know; `;
  }
  const created = await client.createWebhook({ url });
  return { webhook: created.webhook, secret: created.secret, ownedByRun: true, story: `${story}registered webhook ${created.webhook.webhookId} at ${wanted} for this run` };
}
