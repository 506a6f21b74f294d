import { expect } from 'chai';
import { ulid } from 'ulid';
import { newMessage } from '../test/new-message.ts';
import { testTargets } from '../test/targets.ts';
import { createStore, type MessageSearchQuery, type NewMessage, type RoomScope, type Store } from './index.ts';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 10);

// Oldest first: a room's messages take times in append order.
const CORPUS: Array<{ body: string; overrides?: Partial<NewMessage>; day?: number }> = [
  { body: 'the deployment pipeline timed out again', day: -5 },
  { body: 'we should rename parse_config before the release' },
  { body: 'the parseConfig helper in the client is slow', overrides: { senderId: 'u_bob' } },
  { body: 'bump config.max_retries to 5' },
  { body: 'see src/auth/token.ts for the refresh logic' },
  { body: 'docs at https://example.com/docs/search?q=trgm#top are out of date' },
  { body: 'broken by commit 3f9a2b7c1d4e5f60718293a4b5c6d7e8f9012345 last night' },
  { body: 'the fix:\n```ts\nconst retryBudget = computeBudget(items);\n```\nworks' },
  { body: 'call `flushQueue()` after the batch' },
  { body: 'an exact   phrase sits in the middle' },
  { body: 'phrase exact, in the other order' },
  {
    body: '@carol can you look at the kebab-case-name in the style guide',
    overrides: { mentions: [{ principalKind: 'human', principalId: 'u_carol', startByte: 0, endByte: 6 }] },
  },
  { body: 'a\u0000needle_nul b' },
];

for (const target of testTargets) {
  describe(`message search on ${target.name}`, function () {
    let store: Store;
    let cleanup: () => Promise<void>;
    const repositoryId = ulid();
    const branchId = ulid();
    const otherRepositoryId = ulid();

    const append = async (scope: RoomScope, body: string, overrides: Partial<NewMessage> = {}, at = T0) => {
      const outcome = await store.messages.append(scope, newMessage({ bodyMarkdown: body, bodyBytes: Buffer.byteLength(body), ...overrides }), {
        newRoomId: ulid(),
        now: new Date(at),
      });
      expect(outcome.kind).to.equal('created');
    };

    const query = (overrides: Partial<MessageSearchQuery>): MessageSearchQuery => ({
      repositoryId,
      terms: [],
      phrases: [],
      senderIds: [],
      mentionIds: [],
      hasCode: false,
      hasLink: false,
      order: 'newest',
      limit: 50,
      timeoutMs: 5000,
      ...overrides,
    });
    const bodies = async (overrides: Partial<MessageSearchQuery>) => (await store.messages.search(query(overrides))).hits.map((h) => h.message.bodyMarkdown).sort();
    const find = (...terms: string[]) => bodies({ terms });

    before(async function () {
      const opened = await target.open();
      store = createStore(opened.database);
      cleanup = opened.cleanup;
      let i = 0;
      for (const { body, overrides, day } of CORPUS) await append({ repositoryId, branchId: null }, body, overrides, T0 + (day ?? 0) * DAY + i++);
      await append({ repositoryId, branchId }, 'parse_config on the branch too', {}, T0 + 100);
      await append({ repositoryId: otherRepositoryId, branchId: null }, 'parse_config in another repository', {}, T0 + 200);
    });
    after(async () => cleanup());

    it('finds a snake_case identifier whole and by each part, in every room of the repository and no other', async function () {
      expect(await find('parse_config')).to.deep.equal(['parse_config on the branch too', 'we should rename parse_config before the release']);
      expect(await find('parse', 'config')).to.include.members(['we should rename parse_config before the release', 'the parseConfig helper in the client is slow']);
      expect(await find('parse_config')).not.to.include('parse_config in another repository');
      expect(await bodies({ repositoryId: otherRepositoryId, terms: ['parse_config'] })).to.deep.equal(['parse_config in another repository']);
    });

    it('finds a camelCase identifier whole and by its humps', async function () {
      expect(await find('parseconfig')).to.deep.equal(['the parseConfig helper in the client is slow']);
      expect(await find('parse', 'helper')).to.deep.equal(['the parseConfig helper in the client is slow']);
      expect(await find('config', 'helper')).to.deep.equal(['the parseConfig helper in the client is slow']);
    });

    it('finds dotted names whole and by their parts', async function () {
      expect(await find('config.max_retries')).to.deep.equal(['bump config.max_retries to 5']);
      expect(await find('max_retries')).to.deep.equal(['bump config.max_retries to 5']);
      expect(await find('retries')).to.deep.equal(['bump config.max_retries to 5']);
    });

    it('finds file paths whole and by their tail', async function () {
      expect(await find('src/auth/token.ts')).to.deep.equal(['see src/auth/token.ts for the refresh logic']);
      expect(await find('auth/token')).to.deep.equal(['see src/auth/token.ts for the refresh logic']);
      expect(await find('token.ts')).to.deep.equal(['see src/auth/token.ts for the refresh logic']);
    });

    it('finds URLs whole and by host', async function () {
      const doc = 'docs at https://example.com/docs/search?q=trgm#top are out of date';
      expect(await find('https://example.com/docs/search?q=trgm#top')).to.deep.equal([doc]);
      expect(await find('example.com/docs')).to.deep.equal([doc]);
    });

    it('finds a commit by any prefix of 7 or more hex characters', async function () {
      const commit = 'broken by commit 3f9a2b7c1d4e5f60718293a4b5c6d7e8f9012345 last night';
      for (const prefix of ['3f9a2b7', '3f9a2b7c1d', '3f9a2b7c1d4e5f60718293a4b5c6d7e8f9012345']) expect(await find(prefix)).to.deep.equal([commit]);
      expect(await find('3f9a2b8')).to.deep.equal([]);
    });

    it('finds text inside fenced and inline code, and whole hyphenated names by their parts', async function () {
      const fenced = 'the fix:\n```ts\nconst retryBudget = computeBudget(items);\n```\nworks';
      expect(await find('computebudget')).to.deep.equal([fenced]);
      expect(await find('retrybudget')).to.deep.equal([fenced]);
      expect(await find('flushqueue()')).to.deep.equal(['call `flushQueue()` after the batch']);
      expect(await find('kebab-case-name')).to.have.length(1);
      expect(await find('case-name')).to.have.length(1);
    });

    it('finds partial words of 3 characters', async function () {
      const deploy = 'the deployment pipeline timed out again';
      expect(await find('dep')).to.deep.equal([deploy]);
      expect(await find('pip', 'eli')).to.deep.equal([deploy]);
    });

    it('finds an exact phrase across any whitespace, not its words in another order', async function () {
      expect(await bodies({ phrases: ['exact phrase'] })).to.deep.equal(['an exact   phrase sits in the middle']);
      expect(await find('exact', 'phrase')).to.have.length(2);
    });

    it('searches a body that holds NUL', async function () {
      expect(await find('needle_nul')).to.deep.equal(['a\u0000needle_nul b']);
    });

    it('filters by sender, mention, time, code, link and room', async function () {
      expect(await bodies({ senderIds: ['u_bob'] })).to.deep.equal(['the parseConfig helper in the client is slow']);
      expect(await bodies({ mentionIds: ['u_carol'] })).to.deep.equal(['@carol can you look at the kebab-case-name in the style guide']);
      expect(await bodies({ mentionIds: ['u_bob'] })).to.deep.equal([]);
      expect(await bodies({ before: new Date(T0 - DAY) })).to.deep.equal(['the deployment pipeline timed out again']);
      expect(await bodies({ after: new Date(T0 - DAY), terms: ['the'] })).not.to.include('the deployment pipeline timed out again');
      expect(await bodies({ hasCode: true })).to.deep.equal(['call `flushQueue()` after the batch', 'the fix:\n```ts\nconst retryBudget = computeBudget(items);\n```\nworks']);
      expect(await bodies({ hasLink: true })).to.deep.equal(['docs at https://example.com/docs/search?q=trgm#top are out of date']);
      expect(await bodies({ branchId, terms: ['parse_config'] })).to.deep.equal(['parse_config on the branch too']);
      expect(await bodies({ branchId: null, terms: ['parse_config'] })).to.deep.equal(['we should rename parse_config before the release']);
      expect(await bodies({ branchId: ulid(), terms: ['parse_config'] })).to.deep.equal([]);
    });

    it('takes LIKE wildcards in a term literally', async function () {
      expect(await find('max%retries')).to.deep.equal([]);
      expect(await find('max_retries')).to.have.length(1);
      expect(await find('max-retries')).to.deep.equal([]);
    });

    describe('ordering and pages', function () {
      const orderRepositoryId = ulid();
      const scope = { repositoryId: orderRepositoryId, branchId: null };
      before(async function () {
        // Whole-word matches of "retry" first by relevance; "retrying" and "retryable" inside words.
        const texts = ['retrying soon', 'retry now', 'retryable errors', 'retry it, then retry', 'a retry', 'retrying again, a longer message about nothing much in particular'];
        for (const [i, text] of texts.entries()) await append(scope, text, {}, T0 + i * 1000);
      });

      const pages = async (order: 'newest' | 'relevance', limit: number) => {
        const seen: string[] = [];
        let position: MessageSearchQuery['position'];
        for (let guard = 0; guard < 20; guard++) {
          const page = await store.messages.search(query({ repositoryId: orderRepositoryId, terms: ['retry'], order, limit, ...(position ? { position } : {}) }));
          seen.push(...page.hits.map((h) => h.message.bodyMarkdown));
          const last = page.hits.at(-1);
          if (!page.hasMore || !last) return { seen, scores: page.hits.map((h) => h.score) };
          position = order === 'newest'
            ? { order, createdAtMs: last.message.createdAt.getTime(), messageId: last.message.messageId }
            : { order, score: last.score, messageId: last.message.messageId };
        }
        throw new Error('search pages did not end');
      };

      it('pages newest first through every match, each once', async function () {
        const { seen } = await pages('newest', 2);
        expect(seen).to.deep.equal(['retrying again, a longer message about nothing much in particular', 'a retry', 'retry it, then retry', 'retryable errors', 'retry now', 'retrying soon']);
      });

      it('pages most relevant first: whole words before words that contain the term, shorter before longer', async function () {
        const { seen } = await pages('relevance', 2);
        expect(seen).to.have.length(6);
        expect(new Set(seen.slice(0, 3))).to.deep.equal(new Set(['retry now', 'retry it, then retry', 'a retry']));
        expect(seen.at(-1)).to.equal('retrying again, a longer message about nothing much in particular');
        const { seen: single } = await pages('relevance', 1);
        expect(single).to.deep.equal(seen);
      });
    });
  });
}
