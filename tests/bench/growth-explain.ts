import pg from 'pg';
import { ulid } from 'ulid';

/** One hot query as PostgreSQL ran it: buffers touched (load-independent) and execution time (median). */
export interface QueryCost {
  buffers: number;
  /** Buffers not found in shared buffers (read from the OS page cache or disk). */
  reads: number;
  executionMs: number;
}

export interface HotQueryTargets {
  /** A room to list from its start. */
  firstPageRoomId: string;
  /** A room and a seq deep in it to list after. */
  deep: { roomId: string; afterSeq: number };
  /** The scope key, repository and branch of a room to append to. */
  append: { scopeKey: string; repositoryId: string; branchId: string; senderId: string };
  limit: number;
}

const RUNS = 15;

/**
 * `EXPLAIN (ANALYZE, BUFFERS)` of the service's hot queries in the shape the store sends them: a list
 * page (messages.listAfter) from the start and after a deep seq, and a one-message append
 * (chat_append_messages_v1, its inserts and index probes; rolled back). Buffers touched per query do
 * not depend on what else runs on the machine, so they say whether the layout keeps a query's work
 * flat as the store grows when wall-clock figures are noisy.
 */
export async function measureHotQueries(databaseUrl: string, targets: HotQueryTargets): Promise<Record<'firstPage' | 'deepCursor' | 'append', QueryCost>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const list = (roomId: string, afterSeq: number) =>
      explain(client, `SELECT * FROM messages WHERE room_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, [roomId, afterSeq, targets.limit + 1]);
    const body = 'growth append probe';
    const append = () => {
      const now = Date.now();
      const item = {
        ord: 0, scope_key: targets.append.scopeKey, now_ms: now, fresh_id: ulid(now), repository_id: targets.append.repositoryId,
        branch_id: targets.append.branchId, sender_kind: 'user', sender_id: targets.append.senderId, request_id: `req_${ulid()}`,
        idempotency_key: ulid(), body_base64: Buffer.from(body).toString('base64'), body_bytes: body.length, rendered_html: `<p>${body}</p>\n`,
        mentions: null, authorization_decision_id: null, authorizing_subject_id: null, authorizing_subject_kind: null, bot_credential_id: null, bot_grant_id: null,
      };
      return explain(client, `SELECT * FROM chat_append_messages_v1($1::json)`, [JSON.stringify([item])], { rollback: true });
    };
    return {
      firstPage: await repeat(() => list(targets.firstPageRoomId, 0)),
      deepCursor: await repeat(() => list(targets.deep.roomId, targets.deep.afterSeq)),
      append: await repeat(append),
    };
  } finally {
    await client.end();
  }
}

/** The last run's buffers (caches warm, as in service) and the median execution time of RUNS runs. */
async function repeat(run: () => Promise<QueryCost>): Promise<QueryCost> {
  const costs: QueryCost[] = [];
  for (let i = 0; i < RUNS; i++) costs.push(await run());
  const times = costs.map((c) => c.executionMs).sort((a, b) => a - b);
  const last = costs[costs.length - 1]!;
  return { ...last, executionMs: times[Math.floor(times.length / 2)]! };
}

interface PlanNode {
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
}

async function explain(client: pg.Client, text: string, values: unknown[], options: { rollback?: boolean } = {}): Promise<QueryCost> {
  if (options.rollback) await client.query('BEGIN');
  try {
    const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode; 'Execution Time': number }> }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, values);
    const [result] = rows[0]!['QUERY PLAN'];
    const plan = result!.Plan;
    return { buffers: plan['Shared Hit Blocks'] + plan['Shared Read Blocks'], reads: plan['Shared Read Blocks'], executionMs: result!['Execution Time'] };
  } finally {
    if (options.rollback) await client.query('ROLLBACK');
  }
}
