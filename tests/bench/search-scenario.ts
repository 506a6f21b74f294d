import pg from 'pg';
import { ulid } from 'ulid';
import { seededRandom } from '../harness/seeded-random.ts';
import { backgroundWriter } from '../search/corpus-generator.ts';
import { fixtureDocument, startBenchCluster, type BenchCluster } from './bench-cluster.ts';
import { startPacedWriter } from './paced-writer.ts';
import { measureSearches, SEARCH_QUERY_CLASSES, type SearchLatency } from './search-load.ts';
import { buildSearchIndex, dropSearchIndex, SEARCH_INDEX, seedSearchStore, type SearchShape } from './search-seed.ts';
import { percentile, round } from './stats.ts';
import { benchTokens, formatCount, formatFailures, sleep } from './stream-rooms.ts';

/** The store the search targets are set for: 1,000,000 messages over 10,000 rooms. */
export const SEARCH_MESSAGES = 1_000_000;
const QUICK_MESSAGES = 50_000;
const MESSAGES_PER_ROOM = 100;
const ROOMS_PER_REPOSITORY = 100;
const FULL = { appendsPerSecond: 100, appendSeconds: 40, appendRooms: 100, searchSeconds: 30, warmupSeconds: 5 };
const QUICK = { appendsPerSecond: 50, appendSeconds: 8, appendRooms: 20, searchSeconds: 8, warmupSeconds: 3 };
/** One client's search rate. */
const SEARCHES_PER_SECOND = 20;
const APPEND_RATIO_TARGET = 1.15;
const SEED = 20_261_207;

interface Figure {
  name: string;
  value: string;
  target: string;
  note?: string;
}

/**
 * Search at size: a store of `messages` messages (default 1,000,000; `--quick` 50,000) written in the
 * relevance corpus's vocabulary, 100 to a room and 100 rooms to a repository, seeded with SQL
 * (search-seed.ts) on the distributed shape's own database with one API process. Measures, in order:
 * the append round trip without the trigram index (dropped before the seed), the index build, the
 * append round trip with it, the index's size per message, one client's searches at 20/s through
 * the API for each kind of query (search-load.ts) with p50, p95 and p99 against their targets and the
 * store's matches per query, and the append round trip without the index once more (dropped again):
 * the p99 with it against both windows without it is the index's cost to appends.
 */
export async function runSearchScenario(options: { quick: boolean; messages?: number; progress: (line: string) => void }): Promise<Figure[]> {
  const size = options.quick ? QUICK : FULL;
  const messages = options.messages ?? (options.quick ? QUICK_MESSAGES : SEARCH_MESSAGES);
  const cluster = await startBenchCluster('distributed', { apis: 1, gateways: 0 });
  try {
    const databaseUrl = cluster.databaseUrl!;
    const shape = searchShape(messages, cluster.fixture.writers);
    const repositories = groupByRepository(shape);
    await cluster.core.putFixture(fixtureDocument(cluster.fixture, repositories.map(({ id, branchIds }) => ({ id, branchIds }))));

    await dropSearchIndex(databaseUrl);
    const seeded = await seedSearchStore(databaseUrl, shape, (line) => options.progress(`search seed: ${line}`));
    const branchRooms = shape.rooms.filter((r) => r.branchId !== null);
    // Rooms spread evenly over the store.
    const appendRoomCount = Math.min(size.appendRooms, branchRooms.length);
    const appendRooms = Array.from({ length: appendRoomCount }, (_, i) => branchRooms[Math.floor((i * branchRooms.length) / appendRoomCount)]!);
    const appendPaths = appendRooms.map((r) => `/v1/repositories/${r.repositoryId}/branches/${r.branchId}/room/messages`);

    // Without, with, without again: the two windows without the index bracket the one with it, so a
    // drift over the run (caches filling, the machine's other work) weighs on both sides alike.
    options.progress('appends without the trigram index');
    await measureAppends(cluster, appendPaths, { ...size, appendSeconds: size.warmupSeconds });
    const withoutBefore = await measureAppends(cluster, appendPaths, size);
    options.progress('building the trigram index');
    const buildSeconds = await buildSearchIndex(databaseUrl);
    options.progress('appends with the trigram index');
    await measureAppends(cluster, appendPaths, { ...size, appendSeconds: size.warmupSeconds });
    const withIndex = await measureAppends(cluster, appendPaths, size);
    const index = await indexSize(databaseUrl);

    const { readers } = await benchTokens(cluster);
    const repositoryIds = repositories.map((r) => r.id);
    const search = (queries: string[], seconds: number, seed: number) =>
      measureSearches({ apiUrl: cluster.apiUrls[0]!, token: readers[0]!, repositoryIds, queries, ratePerSecond: SEARCHES_PER_SECOND, seconds, seed });
    options.progress('searches (warm-up)');
    await search(SEARCH_QUERY_CLASSES.flatMap((c) => c.queries), size.warmupSeconds, SEED);
    const label = `${formatCount(index.messages)} messages / ${formatCount(shape.rooms.length)} rooms`;
    const figures: Figure[] = [
      {
        name: 'search: seeding',
        value: `${formatCount(seeded.messages)} messages over ${formatCount(shape.rooms.length)} rooms of ${formatCount(repositories.length)} ${repositories.length === 1 ? 'repository' : 'repositories'} in ${round(seeded.seconds, 0)} s; index build ${round(buildSeconds, 1)} s`,
        target: 'none (SQL into the real tables, search_text by chat_message_search_text)',
      },
      {
        name: `search: trigram index size (${label})`,
        value: `${(index.bytes / 2 ** 20).toFixed(1)} MiB, ${formatCount(index.bytes / index.messages)} B per message (search_text ${formatCount(index.textBytes / index.messages)} B per message)`,
        target: 'none (docs/capacity.md, "Search")',
      },
    ];
    for (const [i, queryClass] of SEARCH_QUERY_CLASSES.entries()) {
      options.progress(`searches: ${queryClass.label}`);
      const latency = await search(queryClass.queries, size.searchSeconds, SEED + 1 + i);
      const matches = await matchCounts(databaseUrl, queryClass.queries);
      figures.push(searchFigure(`${queryClass.label} (${queryClass.queries.length} distinct), ${SEARCHES_PER_SECOND}/s from one client, ${label}`, latency, queryClass.p95TargetMs, matches));
    }

    options.progress('appends without the trigram index, again');
    await dropSearchIndex(databaseUrl);
    await measureAppends(cluster, appendPaths, { ...size, appendSeconds: size.warmupSeconds });
    const withoutAfter = await measureAppends(cluster, appendPaths, size);
    figures.splice(2, 0, appendFigure([withoutBefore, withoutAfter], withIndex, { appendsPerSecond: size.appendsPerSecond, appendRooms: appendPaths.length }));
    return figures;
  } finally {
    await cluster.stop();
  }
}

/** `messages / 100` rooms, 100 to a repository, each repository's first room its repository room. */
function searchShape(messages: number, senders: string[]): SearchShape {
  const roomCount = Math.max(2, Math.round(messages / MESSAGES_PER_ROOM));
  const rooms: SearchShape['rooms'] = [];
  let repositoryId = '';
  for (let i = 0; i < roomCount; i++) {
    const first = i % ROOMS_PER_REPOSITORY === 0;
    if (first) repositoryId = ulid();
    rooms.push({ repositoryId, roomId: ulid(), branchId: first ? null : ulid() });
  }
  return { rooms, messages, senders, seed: SEED };
}

function groupByRepository(shape: SearchShape): Array<{ id: string; branchIds: string[] }> {
  const byId = new Map<string, string[]>();
  for (const room of shape.rooms) {
    const branches = byId.get(room.repositoryId) ?? [];
    if (room.branchId !== null) branches.push(room.branchId);
    byId.set(room.repositoryId, branches);
  }
  return [...byId].map(([id, branchIds]) => ({ id, branchIds }));
}

interface AppendLatency {
  failures: Record<string, number>;
  roundTripsMs: number[];
}

/** A paced writer into `paths` for the window, with bodies of the corpus's background (what the index takes in). */
async function measureAppends(cluster: BenchCluster, paths: string[], size: { appendsPerSecond: number; appendSeconds: number }): Promise<AppendLatency> {
  const { writers } = await benchTokens(cluster);
  const bodies = backgroundWriter(seededRandom(SEED + 100));
  const writer = startPacedWriter({
    apiUrls: cluster.apiUrls,
    paths,
    tokens: writers,
    ratePerSecond: size.appendsPerSecond,
    maxInFlight: 64,
    bodyOf: () => bodies.next().body.replace(/@\{([a-z]+)\}/g, '@$1'),
  });
  await sleep(size.appendSeconds * 1000);
  const stats = await writer.stop();
  return { failures: { ...stats.failures, ...(stats.skipped > 0 ? { skipped: stats.skipped } : {}) }, roundTripsMs: stats.roundTripsMs };
}

/** The p99 with the index against the p99 of both windows without it, pooled. */
function appendFigure(without: AppendLatency[], withIndex: AppendLatency, size: { appendsPerSecond: number; appendRooms: number }): Figure {
  const withoutTrips = without.flatMap((w) => w.roundTripsMs);
  const [p50With, p99With] = [percentile(withIndex.roundTripsMs, 50), percentile(withIndex.roundTripsMs, 99)];
  const [p50Without, p99Without] = [percentile(withoutTrips, 50), percentile(withoutTrips, 99)];
  const ratio = p99With / p99Without;
  const windows = without.map((w) => `${round(percentile(w.roundTripsMs, 99))}`).join(' and ');
  const failures = [withIndex, ...without].map((w) => formatFailures(w.failures)).join('');
  const met = ratio <= APPEND_RATIO_TARGET && failures === '';
  return {
    name: `search: append round trip p99 with the trigram index vs without, ${size.appendsPerSecond}/s over ${size.appendRooms} rooms`,
    value: `${round(ratio, 2)}×, ${met ? 'met' : 'NOT met'}: ${round(p99With)} ms with, ${round(p99Without)} ms without (${windows} ms in the windows before and after; p50 ${round(p50With)} vs ${round(p50Without)} ms; ${formatCount(withIndex.roundTripsMs.length)} / ${formatCount(withoutTrips.length)} appends${failures})`,
    target: `≤ ${APPEND_RATIO_TARGET}×`,
  };
}

function searchFigure(name: string, latency: SearchLatency, p95TargetMs: number, matches: { median: number; max: number }): Figure {
  const failures = { ...latency.failures, ...(latency.skipped > 0 ? { skipped: latency.skipped } : {}) };
  const met = latency.p95 <= p95TargetMs && Object.keys(failures).length === 0;
  return {
    name: `search: ${name}`,
    value: `p95 ${round(latency.p95)} ms, ${met ? 'met' : 'NOT met'} (p50 ${round(latency.p50)}, p99 ${round(latency.p99)} ms; ${formatCount(latency.count)} searches${formatFailures(failures)})`,
    target: `p95 ≤ ${p95TargetMs} ms`,
    note: `matches per query in the whole store: median ${formatCount(matches.median)}, max ${formatCount(matches.max)}`,
  };
}

/** The trigram index's bytes, search_text's bytes and the message count. */
async function indexSize(databaseUrl: string): Promise<{ bytes: number; textBytes: number; messages: number }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ bytes: string; text_bytes: string; messages: string }>(
      `SELECT pg_relation_size('${SEARCH_INDEX}') AS bytes, sum(pg_column_size(search_text)) AS text_bytes, count(*) AS messages FROM messages`,
    );
    return { bytes: Number(rows[0]!.bytes), textBytes: Number(rows[0]!.text_bytes), messages: Number(rows[0]!.messages) };
  } finally {
    await client.end();
  }
}

/** How many messages of the whole store each query matches (every word a substring, as search does): median and max. */
async function matchCounts(databaseUrl: string, queries: string[]): Promise<{ median: number; max: number }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const counts: number[] = [];
    for (const q of queries) {
      const words = q.toLowerCase().split(/\s+/).filter(Boolean);
      const where = words.map((_, i) => `search_text LIKE $${i + 1}`).join(' AND ');
      const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM messages WHERE ${where}`, words.map((w) => `%${w.replace(/[\\%_]/g, (c) => `\\${c}`)}%`));
      counts.push(Number(rows[0]!.n));
    }
    return { median: percentile(counts, 50), max: Math.max(...counts) };
  } finally {
    await client.end();
  }
}
