import type { CreateWebhookResponse, RedeliverWebhookResponse, Webhook, WebhookDeadLetter } from '@chat/client';
import type { Palette } from './palette.ts';
import { terminalSafeLine } from './terminal-text.ts';

const line = terminalSafeLine;

/** `2026-11-25T13:20:01.123Z` as `2026-11-25 13:20:01` (UTC, like the API). */
function shortTime(iso: string): string {
  return line(iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z').replace(/Z$/, ''));
}

/** One webhook: its ID, when it was registered and where it points. */
export function formatWebhook(webhook: Webhook, p: Palette): string {
  return `${p.bold(line(webhook.webhookId))}  ${p.dim(shortTime(webhook.createdAt))}  ${line(webhook.url)}\n`;
}

/** A registration: the webhook, then its secret on a line of its own (the only time it is shown). */
export function formatCreatedWebhook(created: CreateWebhookResponse, p: Palette): string {
  return `${formatWebhook(created.webhook, p)}${p.dim('secret'.padEnd(8))}${line(created.secret)}\n`;
}

/** A removal. */
export function formatDeletedWebhook(deleted: { webhookId: string }): string {
  return `deleted webhook ${line(deleted.webhookId)}\n`;
}

/**
 * One dead letter: when it died, its state and delivery ID, the attempts and the last error, and
 * the mention it would have delivered.
 */
export function formatDeadLetter(letter: WebhookDeadLetter, p: Palette): string {
  const n = letter.notification;
  const state = letter.state === 'dead' ? p.warn('dead') : p.accent('redelivering');
  const where = n.branchId ? `branch ${line(n.branchId)}` : 'repository room';
  const sender = `${n.senderKind === 'bot' ? 'bot ' : ''}${line(n.senderId)}`;
  return [
    `${p.dim(shortTime(letter.deadAt))}  ${state}  ${p.bold(line(letter.deliveryId))}\n`,
    `    ${letter.attempts} attempts, last: ${line(letter.lastError)}\n`,
    `    ${sender} mentioned ${line(n.targetId)} in ${where} of repository ${line(n.repositoryId)}, message ${line(n.messageId)}\n`,
  ].join('');
}

/** The delivery IDs a redelivery request queued, one a line. */
export function formatRedelivery(result: RedeliverWebhookResponse): string {
  return result.redelivering.map((deliveryId) => `redelivering ${line(deliveryId)}\n`).join('');
}
