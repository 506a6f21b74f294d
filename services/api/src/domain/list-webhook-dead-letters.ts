import type { VerifiedPrincipal } from '@chat/authz-client';
import type { CursorCodec, WebhookDeadLetterPageResponse } from '@chat/contracts';
import type { Store, WebhookDeadLetter } from '@chat/store';
import { presentDeadLetter } from '../presenters/webhook.presenter.ts';
import { decodeDeadLetterCursor, encodeDeadLetterCursor } from './dead-letter-cursor.ts';
import { findOwnWebhook } from './find-own-webhook.ts';
import { feedPrincipalOf } from './list-principal-inbox.ts';

export interface ListWebhookDeadLettersInput {
  principal: VerifiedPrincipal;
  /** The repositories the caller may read now, as core listed them for this request. */
  readable: ReadonlySet<string>;
  webhookId: string;
  limit: number;
  cursor: string | undefined;
}

/**
 * listWebhookDeadLetters (extension): a page of the caller's webhook's dead letters in the order
 * they died, after `cursor`. Each carries its notification as the repository inbox shows it, with
 * `acknowledged` read from that inbox's checkpoint. As on the principal inbox, letters of
 * repositories the caller may not read now are read but left out, so a page may hold fewer than
 * `limit` items and the next page still goes on past them.
 */
export async function listWebhookDeadLetters(deps: { store: Store; cursors: CursorCodec }, input: ListWebhookDeadLettersInput): Promise<WebhookDeadLetterPageResponse> {
  const webhook = await findOwnWebhook(deps.store, input.principal, input.webhookId);
  const after = input.cursor === undefined ? undefined : decodeDeadLetterCursor(deps.cursors, webhook.webhookId, input.cursor);
  // One more than a page, to know whether another follows.
  const read = await deps.store.webhooks.listDeadLetters(webhook.webhookId, { ...(after ? { after } : {}), limit: input.limit + 1 });
  const page = read.slice(0, input.limit);
  const shown = page.filter((letter) => input.readable.has(letter.notification.repositoryId));
  const checkpoints = await inboxCheckpoints(deps.store, shown);
  const owner = feedPrincipalOf(input.principal);
  const last = page.at(-1);
  return {
    items: shown.map((letter) => presentDeadLetter(deps.cursors, owner, letter, checkpoints.get(letter.notification.inboxKey) ?? 0)),
    nextCursor: read.length > input.limit && last ? encodeDeadLetterCursor(deps.cursors, webhook.webhookId, last.deadLetter) : null,
  };
}

/** The acknowledged checkpoint of each inbox the letters' notifications are in, one read per inbox. */
async function inboxCheckpoints(store: Store, letters: WebhookDeadLetter[]): Promise<Map<string, number>> {
  const keys = [...new Set(letters.map((letter) => letter.notification.inboxKey))];
  const inboxes = await Promise.all(keys.map((key) => store.inboxes.findByKey(key)));
  return new Map(keys.map((key, i) => [key, inboxes[i]?.ackSeq ?? 0]));
}
