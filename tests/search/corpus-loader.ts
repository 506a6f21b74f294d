import type { MessageResponse } from '@chat/contracts';
import { ulid } from 'ulid';
import { expectStatus } from '../harness/assertions.ts';
import type { Stack } from '../harness/stacks.ts';
import type { Fixture } from '../harness/fixture-factory.ts';
import { EPOCHS, SENDERS, type CorpusMessage, type SenderName } from './corpus-generator.ts';
import { PEOPLE } from './corpus-vocabulary.ts';
import { BRANCH_ROOMS, type PlaceholderValues } from './relevance-queries.ts';

/** The corpus as one deployment holds it: where each message went and what the placeholders stand for. */
export interface LoadedCorpus extends PlaceholderValues {
  repositoryId: string;
  /** The repository that holds the planted copies (copy=other), which no search of the first may return. */
  otherRepositoryId: string;
  /** Message ID by corpus key, and corpus key by message ID. */
  messageIds: Map<string, string>;
  keysByMessageId: Map<string, string>;
  /** A token of a member who reads both repositories. */
  readerToken: string;
}

/** Appends in flight at once: rooms serialize their appends, so a few per room keep them all busy. */
const IN_FLIGHT = 24;

/**
 * Installs the corpus's world in the stack's dev-core (a repository with a repository room and five
 * branch rooms, a second repository, six people who may write to both and a CI bot with an append
 * grant on both) and appends every message of `corpus` through the API, epoch by epoch (each epoch
 * `IN_FLIGHT` at a time), each by its sender with its mentions as structured mentions. Between
 * epochs it notes an instant after every message of the epoch before and not after any of the next.
 */
export async function loadCorpus(stack: Stack, corpus: CorpusMessage[]): Promise<LoadedCorpus> {
  const suffix = ulid().slice(-8).toLowerCase();
  const principalIds = Object.fromEntries(SENDERS.map((s) => [s, s === 'ci' ? `b_ci_${suffix}` : `u_${s}_${suffix}`])) as Record<SenderName, string>;
  const branchIds = Object.fromEntries(BRANCH_ROOMS.map((r) => [r, ulid()])) as PlaceholderValues['branchIds'];
  const repositoryId = ulid();
  const otherRepositoryId = ulid();
  const organizationId = `o_search_${suffix}`;
  const members = Object.fromEntries(PEOPLE.map((p) => [principalIds[p], 'write' as const]));
  const ci = { id: principalIds.ci, credentialId: `c_ci_${suffix}` };
  const fixture: Fixture = {
    users: PEOPLE.map((p) => ({ id: principalIds[p] })),
    organizations: [{ id: organizationId }],
    repositories: [
      { id: repositoryId, state: 'active', branches: Object.values(branchIds).map((id) => ({ id, state: 'active' as const })), members: { ...members } },
      { id: otherRepositoryId, state: 'active', branches: [], members: { ...members } },
    ],
    bots: [
      {
        id: ci.id,
        credentials: [{ id: ci.credentialId, state: 'active' }],
        grants: [repositoryId, otherRepositoryId].map((id, i) => ({
          id: `g_ci_${i}_${suffix}`,
          repositoryId: id,
          subject: { kind: 'organization' as const, id: organizationId },
          capabilities: ['room:read' as const, 'message:append' as const],
          state: 'active' as const,
        })),
      },
    ],
  };
  await stack.fixture.add(fixture);

  const chatTokens = new Map<SenderName, string>();
  const coreTokens = new Map<SenderName, string>();
  for (const person of PEOPLE) {
    chatTokens.set(person, await stack.core.mintToken({ type: 'human', subjectId: principalIds[person] }));
    coreTokens.set(person, await stack.core.mintToken({ type: 'core_resource', subjectId: principalIds[person] }));
  }
  chatTokens.set('ci', await stack.core.mintToken({ type: 'bot', subjectId: ci.id, credentialId: ci.credentialId }));

  const messageIds = new Map<string, string>();
  const keysByMessageId = new Map<string, string>();
  const append = async (message: CorpusMessage, toOther: boolean) => {
    const { bodyMarkdown, mentions } = withMentions(message.body, (name) => ({ kind: name === 'ci' ? 'bot' : 'human', id: principalIds[name] }));
    const scope = toOther
      ? { repositoryId: otherRepositoryId }
      : { repositoryId, branchId: message.room === 'repository' ? undefined : branchIds[message.room] };
    const humanMentions = message.sender !== 'ci' && mentions.some((m) => m.principalKind === 'human');
    const response = await stack.api.append<MessageResponse>(scope, chatTokens.get(message.sender)!, { bodyMarkdown, ...(mentions.length > 0 ? { mentions } : {}) }, {
      ...(humanMentions ? { coreAuthorization: `Bearer ${coreTokens.get(message.sender)!}` } : {}),
    });
    expectStatus(response, 201);
    return response.body;
  };

  const epochStarts: string[] = [];
  let lastOfPrevious = -Infinity;
  for (let epoch = 0; epoch < EPOCHS; epoch++) {
    const batch = corpus.filter((m) => m.epoch === epoch);
    const times: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < batch.length) {
          const message = batch[next++]!;
          const stored = await append(message, false);
          messageIds.set(message.key, stored.messageId);
          keysByMessageId.set(stored.messageId, message.key);
          times.push(Date.parse(stored.createdAt));
          if (message.copyToOther) keysByMessageId.set((await append(message, true)).messageId, `${message.key} (other repository)`);
        }
      }),
    );
    const first = Math.min(...times);
    if (epoch > 0) {
      // createdAt has millisecond precision: 1 ms after the last of the epoch before is after it.
      const start = lastOfPrevious + 1;
      if (start > first) throw new Error(`corpus epochs ${epoch - 1} and ${epoch} overlap in time`);
      epochStarts[epoch] = new Date(start).toISOString();
    }
    lastOfPrevious = Math.max(...times);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { repositoryId, otherRepositoryId, messageIds, keysByMessageId, principalIds, branchIds, epochStarts, readerToken: chatTokens.get('alice')! };
}

/** `@{name}` in `body` written as `@<principal ID>`, each with its structured mention's UTF-8 byte range. */
function withMentions(body: string, principal: (name: SenderName) => { kind: 'human' | 'bot'; id: string }) {
  const mentions: Array<{ principalKind: 'human' | 'bot'; principalId: string; startByte: number; endByte: number }> = [];
  let bodyMarkdown = '';
  let last = 0;
  for (const match of body.matchAll(/@\{([a-z]+)\}/g)) {
    bodyMarkdown += body.slice(last, match.index);
    const { kind, id } = principal(match[1] as SenderName);
    const startByte = Buffer.byteLength(bodyMarkdown);
    bodyMarkdown += `@${id}`;
    mentions.push({ principalKind: kind, principalId: id, startByte, endByte: Buffer.byteLength(bodyMarkdown) });
    last = match.index + match[0].length;
  }
  return { bodyMarkdown: bodyMarkdown + body.slice(last), mentions };
}
