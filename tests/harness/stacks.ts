import { ApiClient } from './api-client.ts';
import { startChatProcess, type ChatProcess } from './chat-process.ts';
import { DevCoreClient, type MintRequest } from './dev-core-client.ts';
import { SharedFixture, type Scenario } from './fixture-factory.ts';
import { ulid } from 'ulid';
import { createScratchDatabase } from './scratch-database.ts';
import { deleteRedisKeys } from './redis-keyspace.ts';
import { testRedisEnv } from './test-redis.ts';

/** The two ways the service runs: embedded (PGlite, in-process backbone) or on PostgreSQL and Redis. */
export type Mode = 'embedded' | 'postgres';
export const MODES: readonly Mode[] = ['embedded', 'postgres'];

/**
 * The environment of one deployment in a mode. On PostgreSQL every deployment gets a database and a
 * Redis key prefix of its own, as separate deployments would: its notifiers sweep every fanout row
 * of their database and its consumer groups read every entry under their prefix, so sharing them with
 * another test's processes (which ask another dev-core) would hand this deployment's work to them.
 */
export async function deploymentEnv(mode: Mode, label: string): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (mode === 'embedded') return { env: {}, drop: async () => undefined };
  const database = await createScratchDatabase(label);
  const keyPrefix = `${label}-${ulid().toLowerCase()}`;
  return {
    env: { DATABASE_URL: database.url, ...(await testRedisEnv()), REDIS_KEY_PREFIX: keyPrefix },
    drop: async () => {
      await database.drop();
      await deleteRedisKeys(keyPrefix).catch(() => undefined);
    },
  };
}

/** One running chat service with the dev-core it uses, the fixture installed in it and a validating client. */
export interface Stack {
  mode: Mode;
  chat: ChatProcess;
  core: DevCoreClient;
  fixture: SharedFixture;
  api: ApiClient;
  /** A fresh scenario installed in dev-core, with tokens for its actors. */
  scenario(): Promise<{ scenario: Scenario; actors: Actors }>;
  stop(): Promise<void>;
}

/** Starts a dedicated stack (one all-in-one process with its embedded dev-core). */
export async function startStack(mode: Mode, env: Record<string, string> = {}): Promise<Stack> {
  const deployment = await deploymentEnv(mode, 'stack');
  const chat = await startChatProcess({ name: `chat[${mode}]`, env: { ...deployment.env, ...env } }).catch(async (err: unknown) => {
    await deployment.drop();
    throw err;
  });
  const core = new DevCoreClient(chat.coreUrl);
  const fixture = new SharedFixture(core);
  const api = new ApiClient(chat.url);
  return {
    mode,
    chat,
    core,
    fixture,
    api,
    async scenario() {
      const scenario = await fixture.scenario();
      return { scenario, actors: new Actors(core, scenario) };
    },
    async stop() {
      api.close();
      await chat.stop();
      await deployment.drop();
    },
  };
}

const shared = new Map<Mode, Promise<Stack>>();

/**
 * The stack every rule-suite file of a mode shares (started on first use, stopped by the root hook),
 * so the whole suite starts two processes instead of two per file. Tests stay isolated by scenario.
 */
export function sharedStack(mode: Mode): Promise<Stack> {
  if (shared.size === 0) {
    // Every mode is started at once on first use: the rule suites need both, and starting is slow.
    for (const m of MODES) {
      // The append rate limit has its own test on a dedicated process; here it must not get in the way.
      const stack = startStack(m, { APPEND_RATE_LIMIT: '1000000' });
      stack.catch(() => undefined);
      shared.set(m, stack);
    }
  }
  return shared.get(mode)!;
}

export async function stopSharedStacks(): Promise<void> {
  const stacks = [...shared.values()];
  shared.clear();
  await Promise.all(stacks.map(async (s) => (await s.catch(() => undefined))?.stop()));
}

/** Tokens for a scenario's actors, minted by dev-core on first use. */
export class Actors {
  private readonly cache = new Map<string, Promise<string>>();

  constructor(
    private readonly core: DevCoreClient,
    readonly scenario: Scenario,
  ) {}

  mint(request: MintRequest): Promise<string> {
    const key = JSON.stringify(request);
    let token = this.cache.get(key);
    if (!token) {
      token = this.core.mintToken(request);
      this.cache.set(key, token);
    }
    return token;
  }

  writer = () => this.mint({ type: 'human', subjectId: this.scenario.users.writer });
  reader = () => this.mint({ type: 'human', subjectId: this.scenario.users.reader });
  outsider = () => this.mint({ type: 'human', subjectId: this.scenario.users.outsider });
  appendBot = () => this.mint({ type: 'bot', subjectId: this.scenario.bots.appender.id, credentialId: this.scenario.bots.appender.credentialId });
  readBot = () => this.mint({ type: 'bot', subjectId: this.scenario.bots.reader.id, credentialId: this.scenario.bots.reader.credentialId });
  revokedBot = () => this.mint({ type: 'bot', subjectId: this.scenario.bots.appender.id, credentialId: this.scenario.bots.appender.revokedCredentialId });
  /** The writer's core resource credential, for `X-Service-Core-Authorization`. */
  coreResource = () => this.mint({ type: 'core_resource', subjectId: this.scenario.users.writer });
}
