import type { CoreClient, ScopeAuthorization, VerifiedPrincipal } from '@chat/authz-client';
import { AppError, AppendMessageRequestSchema, isCanonicalUlid, newUlid, type MentionBinding, type MessageResponse } from '@chat/contracts';
import { roomScopeKey, type AppendOutcome, type MessageRow, type RoomScope, type Store } from '@chat/store';
import { toMessageResponse } from '@chat/wire-format';
import { rateLimited, type AppendRateWindow, type RateUnit } from './append-rate-window.ts';
import type { CommittedMessagePublisher } from '../outbox/outbox.ts';
import { renderMarkdown } from './markdown-renderer.ts';
import { measureBody, sameContent, validateMentions } from './message-body.ts';
import { mentionLookup, resolveMentionTargets } from './resolve-mentions.ts';

export interface AppendMessageDeps {
  store: Store;
  core: CoreClient;
  publisher: CommittedMessagePublisher;
  rateWindow: AppendRateWindow;
  clock: () => Date;
}

export interface AppendMessageInput {
  principal: VerifiedPrincipal;
  scope: RoomScope;
  access: ScopeAuthorization;
  requestId: string;
  /** Raw `Idempotency-Key` header. */
  idempotencyKey: unknown;
  /** Raw `X-Service-Core-Authorization` header. */
  coreAuthorization: unknown;
  /** The parsed JSON body, not yet validated. */
  body: unknown;
}

export interface AppendMessageResult {
  /** true for an exact retry of an earlier append (answered 200 instead of 201). */
  replayed: boolean;
  message: MessageResponse;
}

/**
 * appendRepositoryMessage / appendBranchMessage. An exact retry always gets the original message
 * and consumes no rate capacity (spec section 4, append rule 3), however the room and the sender's
 * budget changed since. Two ways get there:
 *
 * - Plain appends (no mentions, into a room core calls active), nearly all of them, are one
 *   statement: the store's append takes the rate unit in the same transaction, after it finds no
 *   earlier message with the key. A retry takes no unit; a retry whose budget is spent is answered
 *   as a retry, not refused.
 * - Appends with mentions, and appends into a room core calls sealed, look the key up first, so a
 *   retry is answered before the mention checks call core or the seal is recorded. An append with
 *   mentions then takes its unit before core resolves them: a sender past the limit gets 429
 *   without any call to core, so the limit also bounds how often one can ask core who may read a
 *   room. A lookup core answered with refused targets (MENTION_TARGET_INVALID) keeps its unit; one
 *   that refused the author's credential (CORE_RESOURCE_TOKEN_REJECTED) or that core could not
 *   answer gives it back, and so does an append that turns out a retry after all (a concurrent one
 *   committed first).
 */
export async function appendMessage(deps: AppendMessageDeps, input: AppendMessageInput): Promise<AppendMessageResult> {
  const idempotencyKey = parseIdempotencyKey(input.idempotencyKey);
  const request = parseRequest(input.body);
  const mentions = request.mentions ?? [];
  const { bytes } = measureBody(request.bodyMarkdown);
  validateMentions(mentions, bytes);
  const sender = { senderKind: input.principal.kind, senderId: input.principal.id } as const;
  const content = { bodyMarkdown: request.bodyMarkdown, mentions };

  const checkFirst = mentions.length > 0 || input.access.scopeState === 'sealed';
  if (checkFirst) {
    const earlier = await deps.store.messages.findByIdempotencyKey(input.scope, sender.senderKind, sender.senderId, idempotencyKey);
    if (earlier) return replay(earlier, content);
  }
  if (input.access.scopeState === 'sealed') {
    await deps.store.rooms.seal(input.scope, deps.clock());
    throw new AppError('ROOM_SEALED', 'The room is sealed; it stays readable but accepts no messages.');
  }
  const now = deps.clock();
  const rateKey = { ...sender, roomScopeKey: roomScopeKey(input.scope) };
  const placed = deps.rateWindow.budgetAt(rateKey, now.getTime());
  let unit: RateUnit | undefined;
  if (mentions.length > 0) {
    // Built from the request alone: a missing resource credential is refused before it costs a unit.
    const lookup = mentionLookup({ principal: input.principal, scope: input.scope, mentions, coreAuthorization: input.coreAuthorization });
    unit = await deps.rateWindow.take(rateKey, now.getTime());
    try {
      await resolveMentionTargets(deps.core, lookup, input.requestId);
    } catch (err) {
      // Refused targets keep their unit: otherwise probing who may read the room would never meet
      // the limit. A refused credential learns nothing about the room, and is most often an expired
      // one its owner sends again with a fresh one; charging it would lock out the fixed request.
      // Guessing credentials is core's to limit, as it is for any caller of core.
      const refund = !(err instanceof AppError) || err.code === 'AUTHORIZATION_UNAVAILABLE' || err.code === 'CORE_RESOURCE_TOKEN_REJECTED';
      if (refund) await unit.giveBack();
      throw err;
    }
  }

  const { attribution } = input.access;
  let outcome: AppendOutcome;
  try {
    outcome = await deps.store.messages.append(
      input.scope,
      {
        ...sender,
        requestId: input.requestId,
        idempotencyKey,
        bodyMarkdown: request.bodyMarkdown,
        bodyBytes: bytes.length,
        renderedHtml: renderMarkdown(request.bodyMarkdown),
        mentions: mentions.length > 0 ? mentions : null,
        authorizationDecisionId: attribution.authorizationDecisionId,
        authorizingSubjectId: attribution.authorizingSubjectId,
        authorizingSubjectKind: attribution.authorizingSubjectKind,
        botCredentialId: attribution.botCredentialId,
        botGrantId: attribution.botGrantId,
      },
      // An append that holds a unit already is not counted again.
      unit ? { newRoomId: newUlid(), now } : { newRoomId: newUlid(), now, rate: placed.budget },
    );
  } catch (err) {
    // Nothing was appended (or, rarely, a commit whose answer was lost: the client's retry then
    // finds it and is answered as a retry).
    await unit?.giveBack();
    throw err;
  }
  switch (outcome.kind) {
    case 'replayed':
      // An earlier append with this key (or a concurrent one that committed first).
      await unit?.giveBack();
      return replay(outcome.message, content);
    case 'sealed':
      await unit?.giveBack();
      throw new AppError('ROOM_SEALED', 'The room is sealed; it stays readable but accepts no messages.');
    case 'rate_limited':
      throw rateLimited(placed.remainingMs);
    case 'created': {
      const message = toMessageResponse(outcome.message);
      // The backbone payload of a message is its MessageResponse JSON (the relay makes the same).
      // The answer does not wait for the publish: a failed one leaves the entry to the outbox relay.
      void deps.publisher.publishCommitted({
        outboxId: outcome.outboxId,
        roomId: message.roomId,
        seq: outcome.message.seq,
        messageId: message.messageId,
        mentionsSomeone: (message.mentions?.length ?? 0) > 0,
        payload: JSON.stringify(message),
      });
      return { replayed: false, message };
    }
  }
}

function replay(stored: MessageRow, content: { bodyMarkdown: string; mentions: MentionBinding[] }): AppendMessageResult {
  if (!sameContent(stored, content)) {
    throw new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used for a different message.');
  }
  return { replayed: true, message: toMessageResponse(stored) };
}

function parseIdempotencyKey(raw: unknown): string {
  if (!isCanonicalUlid(raw)) throw new AppError('IDEMPOTENCY_KEY_INVALID', 'Idempotency-Key is required and must be a canonical ULID.');
  return raw;
}

function parseRequest(body: unknown) {
  const parsed = AppendMessageRequestSchema.safeParse(body);
  if (parsed.success) return parsed.data;
  const mentionIssue = parsed.error.issues.some((i) => i.path[0] === 'mentions');
  const where = parsed.error.issues.map((i) => i.path.join('.') || 'body').join(', ');
  throw new AppError(mentionIssue ? 'MENTION_INVALID' : 'MESSAGE_INVALID', `The message is malformed (${where}).`);
}
