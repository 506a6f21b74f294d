import { CursorCodec } from '@chat/contracts';
import pg from 'pg';
import { Pool } from 'undici';
import { ulid } from 'ulid';
import { fixtureDocument, startBenchCluster, type BenchCluster } from './bench-cluster.ts';
import { measureHotQueries, type QueryCost } from './growth-explain.ts';
import { growthMessageCount, seedGrowth, type GrowthShape } from './growth-seed.ts';
import { monotonicMs } from './monotonic-clock.ts';
import { startPacedWriter } from './paced-writer.ts';
import { percentile, round } from './stats.ts';
import { benchTokens, formatCount, formatFailures, sleep } from './stream-rooms.ts';

/** The grown store of issue #17: 10 million messages over 10,000 rooms, one of them 1,000,900 deep. */
const FULL = { rooms: 10_000, perRoom: 900, bigRoomExtra: 1_000_000, appendsPerSecond: 200, seconds: 15, appendRooms: 100 };
const QUICK = { rooms: 1_000, perRoom: 90, bigRoomExtra: 10_000, appendsPerSecond: 100, seconds: 4, appendRooms: 20 };
/** Messages in each room the empty store holds: enough for a first page and a cursor deep into it. */
const EMPTY_ROOM_MESSAGES = 1_000;
const PAGE_LIMIT = 50;
const LIST_CLIENTS = 4;

interface Latency {
  count: number;
  failures: Record<string, number>;
  p50: number;
  p99: number;
}

interface PhaseFigures {
  append: Latency;
  firstPage: Latency;
  deepCursor: Latency;
  queries: Record<'firstPage' | 'deepCursor' | 'append', QueryCost>;
}

/** The rooms one phase measures: where appends go, the room whose first page is listed, and a room with a deep position. */
interface PhaseRooms {
  repositoryId: string;
  appendBranches: string[];
  firstPageBranch: { branchId: string; roomId: string };
  deepBranch: { branchId: string; roomId: string; afterSeq: number };
}

/**
 * Growth (issue #17): the append round trip, a first-page list and a deep-cursor list on an empty
 * store, then the same on the same deployment after set-based SQL has grown the store to 10 million
 * messages over 10,000 rooms (growth-seed.ts), figures of one run side by side. The distributed
 * shape only (the store under test is PostgreSQL), on its own scratch database; one API process, no
 * gateway (nothing here streams). Each phase: a paced writer into `appendRooms` rooms for the
 * window, then closed-loop lists (`LIST_CLIENTS` at once, `limit=50`) for the same window each.
 */
export async function runGrowthScenario(options: { quick: boolean; progress: (line: string) => void }): Promise<Array<{ name: string; value: string; target: string; note?: string }>> {
  const size = options.quick ? QUICK : FULL;
  const cluster = await startBenchCluster('distributed', { apis: 1, gateways: 0 });
  try {
    const databaseUrl = cluster.databaseUrl!;
    const grownRepository = ulid();
    const shape: GrowthShape = {
      repositoryId: grownRepository,
      branchIds: Array.from({ length: size.rooms }, () => ulid()),
      roomIds: Array.from({ length: size.rooms }, () => ulid()),
      perRoom: size.perRoom,
      bigRoomExtra: size.bigRoomExtra,
      senders: cluster.fixture.writers,
    };
    await cluster.core.putFixture(fixtureDocument(cluster.fixture, [{ id: grownRepository, branchIds: shape.branchIds }]));

    // Empty store: one room of EMPTY_ROOM_MESSAGES (seeded the same way) to list, fresh rooms to append to.
    const emptyRoom = { branchId: cluster.fixture.streamBranchIds[0]!, roomId: ulid() };
    await seedGrowth(databaseUrl, { repositoryId: cluster.fixture.repositoryId, branchIds: [emptyRoom.branchId], roomIds: [emptyRoom.roomId], perRoom: EMPTY_ROOM_MESSAGES, bigRoomExtra: 0, senders: cluster.fixture.writers });
    const emptyRooms: PhaseRooms = {
      repositoryId: cluster.fixture.repositoryId,
      appendBranches: cluster.fixture.branchIds.slice(0, size.appendRooms),
      firstPageBranch: emptyRoom,
      deepBranch: { ...emptyRoom, afterSeq: EMPTY_ROOM_MESSAGES - PAGE_LIMIT - 1 },
    };
    // Warm-up, not counted: the rooms get created and the API's hot code compiled.
    await measurePhase(cluster, databaseUrl, emptyRooms, { ...size, seconds: options.quick ? 2 : 5 });
    const empty = await measurePhase(cluster, databaseUrl, emptyRooms, size);

    const seeded = await seedGrowth(databaseUrl, shape, (line) => options.progress(`growth seed: ${line}`));
    const storeSize = await databaseSize(databaseUrl);
    const bigRoomSeq = size.perRoom + size.bigRoomExtra;
    const grownRooms: PhaseRooms = {
      repositoryId: grownRepository,
      // The deepest room among the rooms appended to, the rest spread over the store.
      appendBranches: Array.from({ length: size.appendRooms }, (_, i) => shape.branchIds[Math.floor((i * size.rooms) / size.appendRooms)]!),
      firstPageBranch: { branchId: shape.branchIds[size.rooms - 1]!, roomId: shape.roomIds[size.rooms - 1]! },
      deepBranch: { branchId: shape.branchIds[0]!, roomId: shape.roomIds[0]!, afterSeq: bigRoomSeq - PAGE_LIMIT - 1 },
    };
    await measurePhase(cluster, databaseUrl, grownRooms, { ...size, seconds: options.quick ? 2 : 5 });
    const grown = await measurePhase(cluster, databaseUrl, grownRooms, size);

    const label = `${formatCount(growthMessageCount(shape))} messages / ${formatCount(size.rooms)} rooms`;
    const figure = (name: string, key: 'append' | 'firstPage' | 'deepCursor', what: string) => {
      const [a, b] = [empty[key], grown[key]];
      const [qa, qb] = [empty.queries[key], grown.queries[key]];
      return {
        name: `growth: ${name}, empty store → ${label}`,
        value: `p50 ${round(a.p50)} → ${round(b.p50)} ms, p99 ${round(a.p99)} → ${round(b.p99)} ms (p99 ${round(b.p99 / a.p99, 2)}×; ${formatCount(a.count)} / ${formatCount(b.count)} ${what}${formatFailures(a.failures)}${formatFailures(b.failures)})`,
        target: `p99 ≤ 1.5× the empty store's`,
        note: `its SQL in PostgreSQL (EXPLAIN ANALYZE, BUFFERS): ${qa.buffers} → ${qb.buffers} buffers (${qa.reads} → ${qb.reads} not in shared buffers), ${round(qa.executionMs, 3)} → ${round(qb.executionMs, 3)} ms median execution`,
      };
    };
    return [
      figure(`append round trip at ${size.appendsPerSecond}/s over ${size.appendRooms} rooms`, 'append', 'appends'),
      figure(`first-page list (limit ${PAGE_LIMIT}, ${LIST_CLIENTS} clients)`, 'firstPage', 'lists'),
      figure(`deep-cursor list (after seq ${formatCount(emptyRooms.deepBranch.afterSeq)} → ${formatCount(grownRooms.deepBranch.afterSeq)})`, 'deepCursor', 'lists'),
      {
        name: 'growth: seeding',
        value: `${formatCount(seeded.messages)} messages in ${round(seeded.seconds, 0)} s (${formatCount(seeded.messages / seeded.seconds)}/s, VACUUM ANALYZE and CHECKPOINT included); database ${storeSize}`,
        target: 'none (set-based SQL into the real tables)',
      },
    ];
  } finally {
    await cluster.stop();
  }
}

async function measurePhase(cluster: BenchCluster, databaseUrl: string, rooms: PhaseRooms, size: { appendsPerSecond: number; seconds: number }): Promise<PhaseFigures> {
  const { writers } = await benchTokens(cluster);
  const messagesPath = (branchId: string) => `/v1/repositories/${rooms.repositoryId}/branches/${branchId}/room/messages`;
  const writer = startPacedWriter({ apiUrls: cluster.apiUrls, paths: rooms.appendBranches.map(messagesPath), tokens: writers, ratePerSecond: size.appendsPerSecond, maxInFlight: 64 });
  await sleep(size.seconds * 1000);
  const appends = await writer.stop();
  const append = { count: appends.created, failures: { ...appends.failures, ...(appends.skipped > 0 ? { skipped: appends.skipped } : {}) }, p50: percentile(appends.roundTripsMs, 50), p99: percentile(appends.roundTripsMs, 99) };

  const cursor = (await cursorCodec(databaseUrl)).encode({ kind: 'room', roomId: rooms.deepBranch.roomId }, rooms.deepBranch.afterSeq);
  const firstPage = await measureLists(cluster.apiUrls[0]!, `${messagesPath(rooms.firstPageBranch.branchId)}?limit=${PAGE_LIMIT}`, writers, size.seconds);
  const deepCursor = await measureLists(cluster.apiUrls[0]!, `${messagesPath(rooms.deepBranch.branchId)}?limit=${PAGE_LIMIT}&cursor=${cursor}`, writers, size.seconds);
  const appendBranch = rooms.appendBranches[0]!;
  const queries = await measureHotQueries(databaseUrl, {
    firstPageRoomId: rooms.firstPageBranch.roomId,
    deep: rooms.deepBranch,
    append: { scopeKey: `branch:${rooms.repositoryId}:${appendBranch}`, repositoryId: rooms.repositoryId, branchId: appendBranch, senderId: cluster.fixture.writers[0]! },
    limit: PAGE_LIMIT,
  });
  return { append, firstPage, deepCursor, queries };
}

/** Closed-loop GETs of `path` by LIST_CLIENTS clients for `seconds`; a 200 must hold a full page. */
async function measureLists(apiUrl: string, path: string, tokens: string[], seconds: number): Promise<Latency> {
  const pool = new Pool(apiUrl, { connections: LIST_CLIENTS });
  const times: number[] = [];
  const failures: Record<string, number> = {};
  const deadline = monotonicMs() + seconds * 1000;
  try {
    await Promise.all(
      Array.from({ length: LIST_CLIENTS }, async (_, client) => {
        for (let i = 0; monotonicMs() < deadline; i++) {
          const sent = monotonicMs();
          const response = await pool.request({ method: 'GET', path, headers: { authorization: `Bearer ${tokens[(client + i) % tokens.length]!}` } }).catch(() => null);
          const body = response ? ((await response.body.json().catch(() => null)) as { items?: unknown[] } | null) : null;
          if (response?.statusCode === 200 && body?.items?.length === PAGE_LIMIT) times.push(monotonicMs() - sent);
          else {
            const key = response ? `${response.statusCode}${response.statusCode === 200 ? ` with ${body?.items?.length} items` : ''}` : 'network';
            failures[key] = (failures[key] ?? 0) + 1;
          }
        }
      }),
    );
  } finally {
    await pool.close();
  }
  return { count: times.length, failures, p50: percentile(times, 50), p99: percentile(times, 99) };
}

/** The deployment's cursor codec: the secret its first instance generated and kept in the database. */
async function cursorCodec(databaseUrl: string): Promise<CursorCodec> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ secret: string }>(`SELECT secret FROM service_keys WHERE name = 'cursor-hmac-v1'`);
    if (!rows[0]) throw new Error('no cursor secret in the database');
    return new CursorCodec({ current: rows[0].secret });
  } finally {
    await client.end();
  }
}

async function databaseSize(databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ size: string }>(`SELECT pg_size_pretty(pg_database_size(current_database())) AS size`);
    return rows[0]!.size;
  } finally {
    await client.end();
  }
}
