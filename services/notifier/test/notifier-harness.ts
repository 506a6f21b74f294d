import { createCoreClient, type CoreClient } from '@chat/authz-client';
import { RedisStreamsBackbone, type BackboneEvent } from '@chat/backbone';
import { startDevCore, type DevCoreHandle } from '@chat/dev-core';
import type { CursorCodec } from '@chat/contracts';
import { createLogger, type Logger } from '@chat/observability';
import { committedMessageEventsFromPayload, messageJson } from '@chat/wire-format';
import { createStore, inboxKey, loadCursorCodec, migrate, openDatabase, type Database, type MessageRow, type NotificationRow, type StoredMention, type Store } from '@chat/store';
import { ulid } from 'ulid';

const BASE_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/**
 * Notifier tests run in a schema of their own: their sweepers claim every due fanout row, and must
 * not take rows that other packages' tests, running at the same time in the same database, rely on.
 */
export const TEST_SCHEMA = 'notifier_test';
export const TEST_DATABASE_URL = `${BASE_DATABASE_URL}${BASE_DATABASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${TEST_SCHEMA}`)}`;
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const SERVICE_TOKEN = 'notifier-test-service-token';

/** A repository of its own per test file, so tests sharing one database never see each other's inboxes. */
export interface TestWorld {
  repositoryId: string;
  branchId: string;
  database: Database;
  store: Store;
  core: DevCoreHandle;
  coreClient: CoreClient;
  cursors: CursorCodec;
  logger: Logger;
  close(): Promise<void>;
}

/** The fixture: u_alice writes, u_bob reads, u_carol has no access; b_ci may read, b_writer may only append. */
export function worldFixture(repositoryId: string, branchId: string) {
  return {
    users: [{ id: 'u_alice' }, { id: 'u_bob' }, { id: 'u_carol' }],
    organizations: [{ id: 'o_acme' }],
    repositories: [{ id: repositoryId, state: 'active', branches: [{ id: branchId, state: 'active' }], members: { u_alice: 'write', u_bob: 'read' } }],
    bots: [
      {
        id: 'b_ci',
        credentials: [{ id: 'c_1', state: 'active' }],
        grants: [{ id: 'g_1', repositoryId, subject: { kind: 'organization', id: 'o_acme' }, capabilities: ['room:read', 'message:append'], state: 'active' }],
      },
      {
        id: 'b_writer',
        credentials: [{ id: 'c_w', state: 'active' }],
        grants: [{ id: 'g_w', repositoryId, subject: { kind: 'organization', id: 'o_acme' }, capabilities: ['message:append'], state: 'active' }],
      },
    ],
  };
}

export async function openWorld(): Promise<TestWorld> {
  const repositoryId = ulid();
  const branchId = ulid();
  const logger = createLogger({ name: 'notifier-test', level: 'silent' });
  const core = await startDevCore({ port: 0, serviceToken: SERVICE_TOKEN, fixture: worldFixture(repositoryId, branchId), logger });
  const database = await openDatabase({ kind: 'postgres', url: TEST_DATABASE_URL, poolSize: 20 });
  await database.exec(`CREATE SCHEMA IF NOT EXISTS ${TEST_SCHEMA}`);
  await migrate(database);
  const store = createStore(database);
  return {
    repositoryId,
    branchId,
    database,
    store,
    cursors: await loadCursorCodec(store.serviceKeys, { secret: undefined, previousSecrets: [] }),
    core,
    coreClient: createCoreClient({ coreUrl: core.url, serviceToken: SERVICE_TOKEN, timeoutMs: 2000 }),
    logger,
    async close() {
      await database.close();
      await core.close();
    },
  };
}

export function redisBackbone(keyPrefix: string): RedisStreamsBackbone {
  return new RedisStreamsBackbone({ redis: TEST_REDIS_URL, keyPrefix });
}

/** A mention of `principalId` at bytes [start, end). */
export function mention(principalKind: 'human' | 'bot', principalId: string, startByte: number, endByte: number): StoredMention {
  return { principalKind, principalId, startByte, endByte };
}

/** Appends a message the way the API does (mentions recorded for fanout in the same transaction). */
export async function appendMessage(
  store: Store,
  scope: { repositoryId: string; branchId: string | null },
  mentions: StoredMention[],
  body = 'x'.repeat(64),
): Promise<MessageRow> {
  const outcome = await store.messages.append(
    scope,
    {
      senderKind: 'user', senderId: 'u_alice', requestId: ulid(), idempotencyKey: ulid(), bodyMarkdown: body, bodyBytes: Buffer.byteLength(body),
      renderedHtml: `<p>${body}</p>`, mentions: mentions.length > 0 ? mentions : null,
      authorizationDecisionId: ulid(), authorizingSubjectId: 'u_alice', authorizingSubjectKind: 'user', botCredentialId: null, botGrantId: null,
    },
    { newRoomId: ulid(), now: new Date() },
  );
  if (outcome.kind !== 'created') throw new Error(`append gave ${outcome.kind}`);
  return outcome.message;
}

/** The backbone events the API publishes after committing `message` (its `mentions` event, when it mentions anyone). */
export function messageEvents(message: MessageRow): BackboneEvent[] {
  return committedMessageEventsFromPayload(message.roomId, message.seq, messageJson(message));
}

export function inboxOf(repositoryId: string, principalKind: 'human' | 'bot', principalId: string): string {
  return inboxKey({ repositoryId, principalKind, principalId });
}

export async function listInbox(store: Store, key: string): Promise<NotificationRow[]> {
  const rows: NotificationRow[] = [];
  for (;;) {
    const page = await store.notifications.listAfter(key, rows.at(-1)?.seq ?? 0, 1000);
    rows.push(...page);
    if (page.length < 1000) return rows;
  }
}

/** Polls `check` until it returns true or `timeoutMs` passes. */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 15_000, stepMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, stepMs));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Asserts an inbox is seq 1..n without gaps and sorted by (createdAt, notificationId) in seq order. */
export function assertTotalOrder(rows: NotificationRow[]): void {
  rows.forEach((row, i) => {
    if (row.seq !== i + 1) throw new Error(`seq ${row.seq} at position ${i + 1}`);
    const prev = rows[i - 1];
    if (prev && (prev.createdAt.getTime() > row.createdAt.getTime() || (prev.createdAt.getTime() === row.createdAt.getTime() && prev.notificationId >= row.notificationId))) {
      throw new Error(`order inversion at seq ${row.seq}`);
    }
  });
}
