import { expect } from 'chai';
import type { SearchPageResponse } from '@chat/contracts';
import { roomPath } from '../harness/api-client.ts';
import { expectStatus } from '../harness/assertions.ts';
import { MODES, sharedStack, type Stack } from '../harness/stacks.ts';
import { generateCorpus } from './corpus-generator.ts';
import { loadCorpus, type LoadedCorpus } from './corpus-loader.ts';
import { relevanceReport, scores, type QueryOutcome } from './relevance-metrics.ts';
import { labelledQueries, matchesQuery, QUERY_KINDS, relevantKeys, resolvePlaceholders, type LabelledQuery } from './relevance-queries.ts';

/**
 * The search relevance set (docs/interface.md, "Extensions", search): a generated corpus of a
 * repository's rooms (corpus-generator.ts, planted-messages.txt) and labelled queries of every kind
 * a developer types (relevance-queries.json), run through the real search operations over HTTP with
 * order=relevance and limit=20, every answer checked against the OpenAPI document. Prints recall@20
 * and MRR overall and per kind; recall must be at least 0.95.
 */
const K = 20;
const MIN_RECALL = 0.95;
/** Searches in flight at once. */
const IN_FLIGHT = 8;

/** Background messages beside the planted ones; more makes every query's noise grow. @defaultValue 3000 */
const BACKGROUND = Number(process.env.SEARCH_RELEVANCE_BACKGROUND ?? '3000');

const corpus = generateCorpus({ background: BACKGROUND });
const queries = labelledQueries();

describe('search relevance set', function () {
  it('labels at least 200 queries of every kind, each relevant message a planted one that matches its query', function () {
    expect(queries.length).to.be.at.least(200);
    for (const kind of QUERY_KINDS) expect(queries.filter((q) => q.kind === kind).length, kind).to.be.at.least(10);
    const byKey = new Map(corpus.map((m) => [m.key, m]));
    for (const query of queries) {
      for (const key of query.relevant) {
        const message = byKey.get(key);
        expect(message?.planted, `${query.q}: ${key} is no planted message`).to.equal(true);
        expect(matchesQuery(query, message!), `${query.q}: ${key} does not match it`).to.equal(true);
      }
      if (query.backgroundHolding !== undefined) {
        // Every planted message about the same thing is labelled, as the background ones are.
        const planted = corpus.filter((m) => m.planted && m.body.toLowerCase().includes(query.backgroundHolding!) && matchesQuery(query, m));
        expect(query.relevant, query.q).to.have.members(planted.map((m) => m.key));
      }
    }
  });
});

for (const mode of MODES) {
  describe(`[${mode}] search relevance`, function () {
    this.timeout(900_000);
    let stack: Stack;
    let loaded: LoadedCorpus;
    before(async function () {
      stack = await sharedStack(mode);
      loaded = await loadCorpus(stack, corpus);
    });

    it(`finds at least ${MIN_RECALL * 100} % of what the labelled queries look for in the top ${K}, and nothing of another repository`, async function () {
      const outcomes: QueryOutcome[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next < queries.length) {
            const query = queries[next++]!;
            outcomes.push({ query, relevant: relevantKeys(query, corpus), ranked: await search(stack, loaded, query) });
          }
        }),
      );
      outcomes.sort((a, b) => queries.indexOf(a.query) - queries.indexOf(b.query));
      process.stdout.write(`\n${relevanceReport(`${mode}, ${corpus.length.toLocaleString('en-US')} messages`, outcomes, K)}\n\n`);
      expect(scores(outcomes, K).recall).to.be.at.least(MIN_RECALL);
    });
  });
}

/** The corpus keys of one query's first page, best first; an answer from another repository fails the test. */
async function search(stack: Stack, loaded: LoadedCorpus, query: LabelledQuery): Promise<string[]> {
  const base = `/v1/repositories/${loaded.repositoryId}`;
  const path =
    query.room === undefined ? `${base}/search` : `${roomPath({ repositoryId: loaded.repositoryId, branchId: query.room === 'repository' ? undefined : loaded.branchIds[query.room] })}/search`;
  const q = resolvePlaceholders(query.q, loaded);
  const response = await stack.api.send<SearchPageResponse>({
    method: 'GET',
    path: `${path}?q=${encodeURIComponent(q)}&order=relevance&limit=${K}`,
    headers: { authorization: `Bearer ${loaded.readerToken}` },
  });
  expectStatus(response, 200);
  return response.body.items.map((item) => {
    const key = loaded.keysByMessageId.get(item.message.messageId);
    expect(item.message.repositoryId, `${query.q} found ${key ?? item.message.messageId}`).to.equal(loaded.repositoryId);
    return key ?? `unknown ${item.message.messageId}`;
  });
}
