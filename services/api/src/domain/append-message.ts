import type { CoreClient, MentionResolutionRequest, ScopeAuthorization, VerifiedPrincipal } from '@chat/authz-client';
import { AppError, AppendMessageRequestSchema, isCanonicalUlid, newUlid, type MentionBinding, type MessageResponse } from '@chat/contracts';
import type { AppendOptions, AppendOutcome, AppendRateLimit, MessageRow, NewMessage, RoomScope, Store } from '@chat/store';
import { toMessageResponse } from '@chat/wire-format';
import type { CommittedMessagePublisher } from '../outbox/outbox.ts';
import { renderMarkdown } from './markdown-renderer.ts';
import { measureBody, sameContent, validateMentions } from './message-body.ts';
import { mentionLookup, resolveMentionTargets } from './resolve-mentions.ts';

export interface AppendMessageDeps {
  store: Store;
  core: CoreClient;
  publisher: CommittedMessagePublisher;
  /** The append rate limit (spec section 8), counted by the store in the append's own transaction. */
  rateLimit: AppendRateLimit;
  clock: () => Date;
  /** Told when a held rate unit could not be given back (it stays spent until its window ends). */
  onReleaseFailure: (err: unknown) => void;
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
 * appendRepositoryMessage / appendBranchMessage: the request is checked, the store appends (and
 * there alone decides whether it is a retry and counts the rate unit), and the committed message is
 * published after the answer. An exact retry always gets the original message and consumes no rate
 * capacity (spec section 4, append rule 3), however the room and the sender's budget changed since.
 *
 * An append with mentions also asks core who may read the room, and does it between two steps of
 * the store: `hold` answers a retry, a sealed room or a spent budget before core is called, and
 * otherwise holds the rate unit, so a sender past the limit gets 429 without any call to core and
 * the limit also bounds how often one can ask core who may read a room. A lookup core answered with
 * refused targets (MENTION_TARGET_INVALID) keeps its unit; one that refused the author's credential
 * (CORE_RESOURCE_TOKEN_REJECTED) or that core could not answer gives it back.
 */
export async function appendMessage(deps: AppendMessageDeps, input: AppendMessageInput): Promise<AppendMessageResult> {
  const idempotencyKey = parseIdempotencyKey(input.idempotencyKey);
  const request = parseRequest(input.body);
  const mentions = request.mentions ?? [];
  const { bytes } = measureBody(request.bodyMarkdown);
  validateMentions(mentions, bytes);
  const { attribution } = input.access;
  const message: NewMessage = {
    senderKind: input.principal.kind,
    senderId: input.principal.id,
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
  };
  const content = { bodyMarkdown: request.bodyMarkdown, mentions };
  const options: AppendOptions = { newRoomId: newUlid(), now: deps.clock(), rateLimit: deps.rateLimit };

  if (input.access.scopeState === 'sealed') {
    // The store records the seal core reported and answers an exact retry; anything else is refused.
    return answer(deps, await deps.store.messages.append(input.scope, message, { ...options, sealedByCore: true }), content);
  }
  if (mentions.length === 0) return answer(deps, await deps.store.messages.append(input.scope, message, options), content);

  let lookup: MentionResolutionRequest;
  try {
    lookup = mentionLookup({ principal: input.principal, scope: input.scope, mentions, coreAuthorization: input.coreAuthorization });
  } catch (err) {
    // Core cannot be asked without the author's resource credential: an exact retry is still
    // answered, and anything else is refused before it costs a unit.
    const retry = await deps.store.messages.hold(input.scope, message, { ...options, rateLimit: undefined });
    if (retry.kind !== 'held') return answer(deps, retry, content);
    throw err;
  }
  const first = await deps.store.messages.hold(input.scope, message, options);
  if (first.kind !== 'held') return answer(deps, first, content);
  const { hold } = first;
  const release = () => hold.release().catch(deps.onReleaseFailure);
  try {
    await resolveMentionTargets(deps.core, lookup, input.requestId);
  } catch (err) {
    // Refused targets keep their unit: otherwise probing who may read the room would never meet
    // the limit. A refused credential learns nothing about the room, and is most often an expired
    // one its owner sends again with a fresh one; charging it would lock out the fixed request.
    // Guessing credentials is core's to limit, as it is for any caller of core.
    const refund = !(err instanceof AppError) || err.code === 'AUTHORIZATION_UNAVAILABLE' || err.code === 'CORE_RESOURCE_TOKEN_REJECTED';
    if (refund) await release();
    throw err;
  }
  let outcome: AppendOutcome;
  try {
    outcome = await deps.store.messages.append(input.scope, message, { ...options, hold });
  } catch (err) {
    // Nothing was appended (or, rarely, a commit whose answer was lost: the client's retry then
    // finds it and is answered as a retry).
    await release();
    throw err;
  }
  return answer(deps, outcome, content);
}

/** The store's outcome as the use case's answer; a created message is published after commit. */
function answer(deps: AppendMessageDeps, outcome: AppendOutcome, content: { bodyMarkdown: string; mentions: MentionBinding[] }): AppendMessageResult {
  switch (outcome.kind) {
    case 'replayed':
      return replay(outcome.message, content);
    case 'sealed':
      throw new AppError('ROOM_SEALED', 'The room is sealed; it stays readable but accepts no messages.');
    case 'rate_limited':
      // Retry-After is whole seconds, rounded up so a client that waits is never early.
      throw new AppError('RATE_LIMITED', 'Too many messages; retry with the same Idempotency-Key after Retry-After seconds.', {
        retryAfterSeconds: Math.max(1, Math.ceil(outcome.retryAfterMs / 1000)),
      });
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
