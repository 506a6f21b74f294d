import { Pool } from 'undici';
import { seededRandom } from '../harness/seeded-random.ts';
import { CAMEL_IDENTIFIERS, PATHS, SNAKE_IDENTIFIERS, THINGS, VERBS } from '../search/corpus-vocabulary.ts';
import { monotonicMs } from './monotonic-clock.ts';
import { percentile } from './stats.ts';
import { sleep } from './stream-rooms.ts';

/** The kinds of query the search figures are given for, each with its p95 target. */
export interface SearchQueryClass {
  key: 'word' | 'identifier' | 'partial' | 'path';
  label: string;
  queries: string[];
  p95TargetMs: number;
}

const unique = (items: string[]) => [...new Set(items)];
const singleWords = unique([...THINGS, ...VERBS].filter((w) => /^[a-z]{6,}$/.test(w)));

/**
 * Queries drawn from the relevance corpus's vocabulary, which the seeded store is written in: words a
 * team writes (one or two, as its things are named), identifiers whole, partial words (the first 3
 * to 5 letters of a word: one to three trigrams, the cheapest to type and the dearest to answer) and
 * file paths whole or by their last two segments.
 */
export const SEARCH_QUERY_CLASSES: SearchQueryClass[] = [
  { key: 'word', label: 'word queries', queries: unique(THINGS.filter((t) => /^[a-z ]+$/.test(t))), p95TargetMs: 100 },
  { key: 'identifier', label: 'identifier queries', queries: [...CAMEL_IDENTIFIERS, ...SNAKE_IDENTIFIERS], p95TargetMs: 100 },
  { key: 'partial', label: 'partial-word queries', queries: singleWords.map((w, i) => w.slice(0, 3 + (i % 3))), p95TargetMs: 300 },
  { key: 'path', label: 'path queries', queries: unique(PATHS.filter((p) => p.includes('/')).flatMap((p) => [p, p.split('/').slice(-2).join('/')])), p95TargetMs: 300 },
];

export interface SearchLatency {
  count: number;
  /** Answers other than 200, by status (or `network`). */
  failures: Record<string, number>;
  /** Due queries not sent because `maxInFlight` were out. */
  skipped: number;
  p50: number;
  p95: number;
  p99: number;
}

/**
 * One client sending `ratePerSecond` searches, open loop (a query is due every 1/rate seconds
 * whether or not earlier ones returned, so a slow answer shows as latency, not as a lower rate), for
 * `seconds`: each a query of `queries` in a repository of `repositoryIds`, drawn from `seed`, with
 * order=relevance and limit=20. The latency is of every answer, 503s past the search's time bound
 * included.
 */
export async function measureSearches(options: {
  apiUrl: string;
  token: string;
  repositoryIds: string[];
  queries: string[];
  ratePerSecond: number;
  seconds: number;
  seed: number;
  maxInFlight?: number;
}): Promise<SearchLatency> {
  const maxInFlight = options.maxInFlight ?? 16;
  const pool = new Pool(options.apiUrl, { connections: maxInFlight });
  const random = seededRandom(options.seed);
  const times: number[] = [];
  const failures: Record<string, number> = {};
  let skipped = 0;
  let inFlight = 0;
  const pending: Array<Promise<void>> = [];
  const send = async (path: string) => {
    const sent = monotonicMs();
    inFlight++;
    try {
      const response = await pool.request({ method: 'GET', path, headers: { authorization: `Bearer ${options.token}` } });
      const body = (await response.body.json().catch(() => null)) as { items?: unknown[] } | null;
      times.push(monotonicMs() - sent);
      if (response.statusCode !== 200 || !Array.isArray(body?.items)) failures[String(response.statusCode)] = (failures[String(response.statusCode)] ?? 0) + 1;
    } catch {
      failures.network = (failures.network ?? 0) + 1;
    } finally {
      inFlight--;
    }
  };
  try {
    const started = monotonicMs();
    const total = Math.round(options.seconds * options.ratePerSecond);
    for (let i = 0; i < total; i++) {
      const due = started + (i * 1000) / options.ratePerSecond;
      const wait = due - monotonicMs();
      if (wait > 0) await sleep(wait);
      const repositoryId = options.repositoryIds[Math.floor(random() * options.repositoryIds.length)]!;
      const q = options.queries[Math.floor(random() * options.queries.length)]!;
      if (inFlight >= maxInFlight) skipped++;
      else pending.push(send(`/v1/repositories/${repositoryId}/search?q=${encodeURIComponent(q)}&order=relevance&limit=20`));
    }
    await Promise.all(pending);
  } finally {
    await pool.close();
  }
  return { count: times.length, failures, skipped, p50: percentile(times, 50), p95: percentile(times, 95), p99: percentile(times, 99) };
}
