import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InProcessBackbone, RedisStreamsBackbone, type Backbone } from '@chat/backbone';
import { InProcessStreamLeaseRegistry, RedisStreamLeaseRegistry, type StreamCapOptions, type StreamLeaseRegistry } from '@chat/stream-caps';
import { startDevCore, type DevCoreHandle } from '@chat/dev-core';
import { messageJson } from '@chat/wire-format';
import { migrate, openDatabase, type Database, type MessageRow, type RoomScope } from '@chat/store';
import { assembleProcessResources } from '@chat/process-resources';
import { pino } from 'pino';
import { ulid } from 'ulid';
import { createGatewayRuntime, type GatewayRuntime } from '../src/runtime.ts';
import { attachStreamFront } from '../src/http/stream-front.ts';
import type { StreamEngineSettings } from '../src/settings.ts';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SERVICE_TOKEN = 'gateway-test-service-token';

/** Where a harness keeps its messages and fanout. */
export type TargetName = 'pglite+in-process' | 'postgres+redis';
export const TARGETS: TargetName[] = ['pglite+in-process', 'postgres+redis'];

/** One test repository of the fixture: an active branch, a deleted one, alice writes, bob and carol read (carol is left to the inbox-cap tests). */
export interface TestRepository {
  id: string;
  activeBranch: string;
  deletedBranch: string;
}

export interface HarnessOptions {
  target: TargetName;
  engine?: Partial<StreamEngineSettings>;
  caps?: StreamCapOptions;
  /** Test repositories in the fixture. @defaultValue 40 */
  repositories?: number;
  /** PostgreSQL pool size. @defaultValue 20 */
  poolSize?: number;
}

/**
 * A real gateway on a free port: dev-core in-process, a fresh fixture of fresh repository IDs (so
 * tests on the shared PostgreSQL never meet), the chosen store and backbone, real HTTP. The two
 * targets also cover the two ways into the gateway's pipeline: `postgres+redis` through the stream
 * front (stream GETs read off the socket), as main.ts serves them, `pglite+in-process` through Node's
 * server alone.
 */
export class GatewayHarness {
  url = '';
  core!: DevCoreHandle;
  database!: Database;
  backbone!: Backbone;
  leases!: StreamLeaseRegistry;
  gateway!: GatewayRuntime;
  repositories: TestRepository[] = [];
  archived = { id: ulid(), branch: ulid() };
  fixture!: Record<string, unknown>;
  private server!: Server;
  private dataDir: string | undefined;
  private nextRepository = 0;

  constructor(readonly options: HarnessOptions) {}

  async start(): Promise<void> {
    const silent = pino({ level: 'silent' });
    for (let i = 0; i < (this.options.repositories ?? 40); i++) this.repositories.push({ id: ulid(), activeBranch: ulid(), deletedBranch: ulid() });
    this.fixture = this.buildFixture();
    this.core = await startDevCore({ port: 0, serviceToken: SERVICE_TOKEN, logger: silent, fixture: this.fixture });
    const prefix = `gwtest-${ulid().toLowerCase()}`;
    if (this.options.target === 'postgres+redis') {
      this.database = await openDatabase({ kind: 'postgres', url: TEST_DATABASE_URL, poolSize: this.options.poolSize ?? 20 });
      this.backbone = new RedisStreamsBackbone({ redis: TEST_REDIS_URL, keyPrefix: prefix, subscribeBlockMs: 1000 });
      this.leases = new RedisStreamLeaseRegistry({ redis: TEST_REDIS_URL, keyPrefix: prefix, ...this.options.caps });
    } else {
      this.dataDir = await mkdtemp(join(tmpdir(), 'gw-pglite-'));
      this.database = await openDatabase({ kind: 'pglite', dataDir: this.dataDir });
      this.backbone = new InProcessBackbone();
      this.leases = new InProcessStreamLeaseRegistry(this.options.caps);
    }
    await migrate(this.database);
    const resources = await assembleProcessResources({
      database: this.database,
      backbone: this.backbone,
      leases: this.leases,
      logger: silent,
      core: { url: this.core.url, serviceToken: SERVICE_TOKEN, timeoutMs: 1000 },
      cursor: { secret: 'gateway-test-cursor-secret-0123456789abcdef', previousSecrets: [] },
    });
    this.gateway = createGatewayRuntime({ resources, logger: silent, ...(this.options.engine ? { engine: this.options.engine } : {}) });
    this.server = createServer(this.gateway.pipeline.listener);
    if (this.options.target === 'postgres+redis') attachStreamFront(this.server, { pipeline: this.gateway.pipeline, headersTimeoutMs: 20_000 });
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await this.gateway.close();
    this.server.closeAllConnections();
    this.server.close();
    await this.leases.close();
    await this.backbone.close();
    await this.database.close();
    await this.core.close();
    if (this.dataDir) await rm(this.dataDir, { recursive: true, force: true });
  }

  /** A repository no other test uses. */
  repository(): TestRepository {
    const repository = this.repositories[this.nextRepository++];
    if (!repository) throw new Error('harness ran out of test repositories; raise `repositories`');
    return repository;
  }

  token(subjectId = 'u_alice', expiresInSeconds?: number): Promise<string> {
    return this.core.mintToken({ type: 'human', subjectId, ...(expiresInSeconds === undefined ? {} : { expiresInSeconds }) });
  }

  botToken(): Promise<string> {
    return this.core.mintToken({ type: 'bot', subjectId: 'b_ci', credentialId: 'c_1' });
  }

  /** Appends like the API: one transaction through the store; then publishes unless told not to. */
  async append(scope: RoomScope, body: string, options: { publish?: boolean } = {}): Promise<MessageRow> {
    const outcome = await this.gateway.deps.store.messages.append(
      scope,
      {
        senderKind: 'user',
        senderId: 'u_alice',
        requestId: ulid(),
        idempotencyKey: ulid(),
        bodyMarkdown: body,
        bodyBytes: Buffer.byteLength(body),
        renderedHtml: `<p>${body.length} characters</p>`,
        mentions: null,
        authorizationDecisionId: null,
        authorizingSubjectId: 'u_alice',
        authorizingSubjectKind: 'user',
        botCredentialId: null,
        botGrantId: null,
      },
      { newRoomId: ulid(), now: new Date() },
    );
    if (outcome.kind !== 'created') throw new Error(`append was ${outcome.kind}`);
    if (options.publish !== false) await this.publish(outcome.message);
    return outcome.message;
  }

  /** Publishes a committed message the way the API's outbox publishes it after commit. */
  async publish(row: MessageRow): Promise<void> {
    await this.backbone.publish([{ channel: 'messages', scopeKey: row.roomId, seq: row.seq, data: messageJson(row) }]);
  }

  cursorOf(row: MessageRow): string {
    return this.gateway.deps.cursors.encode({ kind: 'room', roomId: row.roomId }, row.seq);
  }

  /** Rewrites alice's and bob's access to one repository live in dev-core. */
  setMembers(repositoryId: string, members: Record<string, 'read' | 'write'>): void {
    const fixture = structuredClone(this.fixture) as { repositories: Array<{ id: string; members: Record<string, string> }> };
    for (const repository of fixture.repositories) if (repository.id === repositoryId) repository.members = members;
    this.fixture = fixture as unknown as Record<string, unknown>;
    this.core.replaceFixture(this.fixture);
  }

  /**
   * Adds a user who reads `repositoryIds`, live in dev-core. A principal's feed spans its
   * repositories and, on the shared PostgreSQL, outlives the harness: a test of a feed takes a fresh
   * principal.
   */
  addUser(repositoryIds: string[]): string {
    const id = `u_${ulid().toLowerCase()}`;
    this.editFixture((fixture) => {
      fixture.users.push({ id });
      for (const repository of fixture.repositories) if (repositoryIds.includes(repository.id)) repository.members[id] = 'read';
    });
    return id;
  }

  /** Removes or restores a user's read access to one repository, live in dev-core. */
  setReader(userId: string, repositoryId: string, reads: boolean): void {
    this.editFixture((fixture) => {
      for (const repository of fixture.repositories) {
        if (repository.id !== repositoryId) continue;
        if (reads) repository.members[userId] = 'read';
        else delete repository.members[userId];
      }
    });
  }

  /** Adds a bot with one active credential and an active `room:read` grant on each of `repositoryIds` (see {@link addUser}). */
  addBot(repositoryIds: string[]): string {
    const id = `b_${ulid().toLowerCase()}`;
    this.editFixture((fixture) => {
      fixture.bots.push({
        id,
        credentials: [{ id: `${id}_c`, state: 'active' }],
        grants: repositoryIds.map((repositoryId, i) => ({
          id: `${id}_g${i}`,
          repositoryId,
          subject: { kind: 'organization', id: 'o_acme' },
          capabilities: ['room:read'],
          state: 'active',
        })),
      });
    });
    return id;
  }

  /** A token of a bot made by {@link addBot}. */
  tokenOfBot(botId: string): Promise<string> {
    return this.core.mintToken({ type: 'bot', subjectId: botId, credentialId: `${botId}_c` });
  }

  /** Revokes or restores a bot's grants on one repository, or its credential, live in dev-core. */
  setBotState(botId: string, change: { repositoryId: string; grant: 'active' | 'revoked' } | { credential: 'active' | 'revoked' }): void {
    this.editFixture((fixture) => {
      const bot = fixture.bots.find((b) => b.id === botId)!;
      if ('credential' in change) for (const credential of bot.credentials) credential.state = change.credential;
      else for (const grant of bot.grants) if (grant.repositoryId === change.repositoryId) grant.state = change.grant;
    });
  }

  private editFixture(edit: (fixture: EditableFixture) => void): void {
    const fixture = structuredClone(this.fixture) as unknown as EditableFixture;
    edit(fixture);
    this.fixture = fixture as unknown as Record<string, unknown>;
    this.core.replaceFixture(this.fixture);
  }

  private buildFixture(): Record<string, unknown> {
    return {
      users: [{ id: 'u_alice' }, { id: 'u_bob' }, { id: 'u_carol' }, { id: 'u_eve' }],
      organizations: [{ id: 'o_acme' }],
      repositories: [
        ...this.repositories.map((r) => ({
          id: r.id,
          state: 'active',
          branches: [
            { id: r.activeBranch, state: 'active' },
            { id: r.deletedBranch, state: 'deleted' },
          ],
          members: { u_alice: 'write', u_bob: 'read', u_carol: 'read' },
        })),
        { id: this.archived.id, state: 'archived', branches: [{ id: this.archived.branch, state: 'active' }], members: { u_alice: 'write' } },
      ],
      bots: [
        {
          id: 'b_ci',
          credentials: [{ id: 'c_1', state: 'active' }],
          grants: this.repositories.map((r, i) => ({
            id: `g_${i}`,
            repositoryId: r.id,
            subject: { kind: 'organization', id: 'o_acme' },
            capabilities: ['room:read', 'message:append'],
            state: 'active',
          })),
        },
      ],
    };
  }
}

/** The parts of the dev-core fixture the harness edits. */
interface EditableFixture {
  users: Array<{ id: string }>;
  repositories: Array<{ id: string; members: Record<string, string> }>;
  bots: Array<{
    id: string;
    credentials: Array<{ id: string; state: string }>;
    grants: Array<{ id: string; repositoryId: string; subject: { kind: string; id: string }; capabilities: string[]; state: string }>;
  }>;
}

/** The room path of a repository (and branch). */
export function roomEventsPath(repositoryId: string, branchId?: string): string {
  return branchId === undefined ? `/v1/repositories/${repositoryId}/room/events` : `/v1/repositories/${repositoryId}/branches/${branchId}/room/events`;
}
