import { createCoreClient, createTokenVerifier, type CoreClient, type CoreOperation, type TokenVerifier } from '@chat/authz-client';
import { InProcessBackbone, RedisStreamsBackbone, type Backbone } from '@chat/backbone';
import type { CursorCodec } from '@chat/contracts';
import { createStreamLeaseRegistry, type StreamLeaseRegistry } from '@chat/stream-caps';
import type { Logger, ReadinessCheck } from '@chat/observability';
import { redisTargetOf } from '@chat/redis-client';
import type { CoreConfig, CursorConfig, DatabaseConfig, RedisConfig } from '@chat/service-config';
import { createStore, databaseTargetFor, loadCursorCodec, migrate, openDatabase, type DataDirLock, type Database, type Store } from '@chat/store';

/** Stream caps, when the process serves streams. */
interface StreamCapSettings {
  principalCap: number;
  roomCap: number;
  leaseMs: number;
}

/** What a process's shared resources are opened from. */
interface ProcessResourcesConfig {
  database: DatabaseConfig;
  redis: RedisConfig;
  core: CoreConfig;
  cursor: CursorConfig;
  /** Needed by `leases`. */
  streamCaps?: StreamCapSettings;
  /**
   * The embedded database folder's lock, when the caller took it before starting anything else that
   * keeps files in the folder (it releases it after `close()`).
   * @defaultValue taken when the embedded database opens, released when it closes
   */
  dataDirLock?: DataDirLock;
}

/** Told the duration and outcome of every call to core. */
type CoreCallObserver = (operation: CoreOperation, seconds: number, outcome: 'ok' | 'error') => void;

/**
 * One process's shared resources: one store, one backbone, one core client and token cache, one
 * cursor codec, and (opened on first use) the stream leases. Every
 * service runtime of the process takes this object instead of opening its own.
 */
export interface ProcessResources {
  database: Database;
  store: Store;
  backbone: Backbone;
  tokens: TokenVerifier;
  core: CoreClient;
  cursors: CursorCodec;
  /** The stream-cap leases (shared through Redis when configured); needs `streamCaps` settings. */
  readonly leases: StreamLeaseRegistry;
  /** Adds an observer of core calls (each service's latency histogram); returns its removal. */
  observeCoreCalls(observer: CoreCallObserver): () => void;
  /** `/readyz` checks of the shared dependencies: postgres, redis (or the in-process backbone), core. */
  readinessChecks(): ReadinessCheck[];
  /** Closes what was opened here, the database last. */
  close(): Promise<void>;
}

/** Parts opened elsewhere (tests open their own database and backbone); the rest is built here. */
interface ProcessResourcesParts {
  database: Database;
  backbone: Backbone;
  core: CoreConfig;
  cursor: CursorConfig;
  logger: Logger;
  /** @defaultValue opened from `streamCaps` on first use */
  leases?: StreamLeaseRegistry;
  streamCaps?: StreamCapSettings;
  /** Redis for leases opened on first use. @defaultValue in-process */
  redis?: RedisConfig;
  /** Whether `close()` closes `database` and `backbone` too. @defaultValue false */
  ownsStorage?: boolean;
}

/** Opens (and, unless `database.migrateOnStart` is false, migrates) the database, the backbone, and everything built on them, once for the process. */
export async function openProcessResources(config: ProcessResourcesConfig, logger: Logger): Promise<ProcessResources> {
  const database = await openDatabase(databaseTargetFor({ databaseUrl: config.database.url, dataDir: config.database.dataDir, poolSize: config.database.poolSize, pooler: config.database.pooler }), {
    onPgliteTemplateUnusable: (err) => logger.warn({ err }, 'no usable PGlite template: initdb initializes the data directory'),
    ...(config.dataDirLock ? { dataDirLock: config.dataDirLock } : {}),
  });
  // Where a migration Job owns the schema (its DDL role, its lock timeout), the process only uses it.
  if (config.database.migrateOnStart !== false) {
    try {
      await migrate(database);
    } catch (err) {
      await database.close();
      throw err;
    }
  }
  const redisTarget = redisTargetOf(config.redis);
  const backbone: Backbone = redisTarget
    ? new RedisStreamsBackbone({ redis: redisTarget, keyPrefix: config.redis.keyPrefix, onBackgroundError: (err) => logger.warn({ err }, 'backbone background error') })
    : new InProcessBackbone();
  return assembleProcessResources({ ...config, database, backbone, logger, ownsStorage: true });
}

/** Builds the process resources over an opened, migrated database and a backbone. */
export async function assembleProcessResources(parts: ProcessResourcesParts): Promise<ProcessResources> {
  const { database, backbone, logger } = parts;
  const store = createStore(database);
  const observers = new Set<CoreCallObserver>();
  const core = createCoreClient({
    coreUrl: parts.core.url,
    serviceToken: parts.core.serviceToken,
    timeoutMs: parts.core.timeoutMs,
    ...(parts.core.authorizationsPerPrincipal === undefined ? {} : { maxAuthorizationsPerPrincipal: parts.core.authorizationsPerPrincipal }),
    observe: (operation, seconds, outcome) => {
      for (const observer of observers) observer(operation, seconds, outcome);
    },
  });
  const tokens = createTokenVerifier({ coreUrl: parts.core.url });
  const cursors = await loadCursorCodec(store.serviceKeys, parts.cursor);
  const redis = parts.redis ?? { url: undefined, keyPrefix: 'chat' };
  let leases = parts.leases;
  const opened: Array<{ close?(): Promise<void> }> = [];

  return {
    database,
    store,
    backbone,
    tokens,
    core,
    cursors,
    get leases() {
      if (leases) return leases;
      if (!parts.streamCaps) throw new Error('this process has no stream-cap settings');
      const created = createStreamLeaseRegistry({ ...parts.streamCaps, redis: redisTargetOf(redis), keyPrefix: redis.keyPrefix, onError: (err) => logger.warn({ err }, 'stream lease trouble') });
      opened.push(created);
      return (leases = created);
    },
    observeCoreCalls(observer) {
      observers.add(observer);
      return () => observers.delete(observer);
    },
    // Shared by every pod: their outage degrades a pod's answers (503 with Retry-After) but leaves
    // it in its Service (admin-server.ts, ReadinessCheck.shared).
    readinessChecks: () => [
      { name: 'postgres', shared: true, check: () => database.ping() },
      { name: 'redis', shared: true, check: () => backbone.ping() },
      { name: 'core', shared: true, check: () => core.ping() },
    ],
    async close() {
      await Promise.allSettled(opened.map((r) => r.close?.()));
      if (!parts.ownsStorage) return;
      await Promise.allSettled([backbone.close()]);
      await database.close();
    },
  };
}
