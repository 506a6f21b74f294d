import { existsSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { checkTemplateMigrations } from './pglite-template-manifest.ts';

/** What the store asks of PGlite: the part of its interface that drizzle and sql-client.ts use. */
export interface PgliteQueryable {
  query<R>(sql: string, params?: unknown[], options?: PgliteQueryOptions): Promise<PgliteResult<R>>;
  exec(sql: string): Promise<Array<PgliteResult<unknown>>>;
}

export interface PgliteHandle extends PgliteQueryable {
  /** How the database came to be: opened as found, loaded from the template, or made by initdb. */
  readonly origin: PgliteOrigin;
  transaction<T>(work: (tx: PgliteQueryable) => Promise<T>): Promise<T>;
  /** The data directory as a gzipped tarball, and the version of the PGlite that wrote it. */
  dumpDataDir(): Promise<{ pglite: string; tarball: Uint8Array }>;
  close(): Promise<void>;
}

export type PgliteOrigin = 'opened' | 'template' | 'initdb';

export interface PgliteStartOptions {
  /**
   * The data directory tarball an empty directory starts from (pglite-template.ts), with its
   * manifest at `<template>.json`.
   * @defaultValue the store's dist/pglite-template.tar.gz, written by its build
   */
  template?: string;
  /** Told when an empty directory cannot start from the template and initdb makes it instead. */
  onTemplateUnusable?: (reason: Error) => void;
}

/**
 * Written by the store's build. Named from the package folder so that the sources (run by tsx in
 * development and tests) find the built one too.
 */
export const PGLITE_TEMPLATE_FILE = fileURLToPath(new URL('../dist/pglite-template.tar.gz', import.meta.url));

export interface PgliteQueryOptions {
  rowMode?: 'array' | 'object';
  /** Only parsers that return a type's text unchanged (drizzle's) can cross to the database's thread. */
  parsers?: Record<number, (value: string, typeId: number) => unknown>;
}

export interface PgliteResult<R> {
  rows: R[];
  fields: Array<{ name: string; dataTypeID: number }>;
  affectedRows?: number;
}

type Request =
  | { op: 'ready' | 'begin' | 'close' | 'dump' }
  | { op: 'query'; sql: string; params: unknown[]; rowMode?: 'array' | 'object'; textTypes?: number[]; tx?: number }
  | { op: 'exec'; sql: string; tx?: number }
  | { op: 'end'; tx: number; commit: boolean };

interface Reply {
  id: number;
  result?: unknown;
  error?: { message: string; name?: string } & Record<string, unknown>;
}

/**
 * Embedded PGlite on a thread of its own. PGlite runs PostgreSQL as WebAssembly, synchronously: on
 * the main thread every statement stopped the HTTP server, the streams and the notifier for its whole
 * run, and the all-in-one process could use one core of two. Here the main thread only posts
 * requests; statements run one at a time on the database's thread, as they did before, and a
 * transaction holds the database until it ends, as PGlite.transaction() does.
 *
 * When the thread dies, every call in flight and every later one fails with "PGlite is closed",
 * which the store reports as STORE_UNAVAILABLE.
 *
 * A data directory without a database starts from the template: a tarball of a database that
 * initdb, every migration and every function file of this build made, unpacked by the thread that
 * then keeps the database (~0.4 s of CPU more than opening one, against ~4 s for initdb); files
 * already there (a volume's lost+found) stay. Without a usable template it is initialized by a
 * thread of its own, which then exits: initdb grows PGlite's WebAssembly memory to ~800 MB, which it
 * never gives back, while a PGlite opened on an initialized directory holds ~300 MB. The process
 * keeps the smaller one for its lifetime (an in-memory database has nowhere to keep initdb's work).
 */
export async function startPgliteThread(dataDir: string | undefined, options: PgliteStartOptions = {}): Promise<PgliteHandle> {
  if (dataDir === undefined) return spawnPgliteThread({ dataDir }, 'initdb');
  if (holdsDatabase(dataDir)) return spawnPgliteThread({ dataDir }, 'opened');
  const template = options.template ?? PGLITE_TEMPLATE_FILE;
  const found = entriesOf(dataDir);
  try {
    if (!existsSync(template)) throw new Error(`there is no PGlite template at ${template}`);
    checkTemplateMigrations(template);
    return await spawnPgliteThread({ dataDir, template }, 'template');
  } catch (err) {
    options.onTemplateUnusable?.(err as Error);
    await removeEntriesBesides(dataDir, found);
  }
  await (await spawnPgliteThread({ dataDir }, 'initdb')).close();
  return spawnPgliteThread({ dataDir }, 'initdb');
}

/** A directory PostgreSQL initialized has its version file (PGlite also takes URLs such as memory://). */
function holdsDatabase(dataDir: string): boolean {
  return dataDir.includes('://') || existsSync(join(dataDir, 'PG_VERSION'));
}

/** What the directory holds (a volume's lost+found, say); nothing when it does not exist yet. */
function entriesOf(dir: string): Set<string> {
  return new Set(existsSync(dir) ? readdirSync(dir) : []);
}

/** Removes what a failed load left, and only that: the directory may be a volume's mount point. */
async function removeEntriesBesides(dir: string, kept: Set<string>): Promise<void> {
  const left = [...entriesOf(dir)].filter((name) => !kept.has(name));
  await Promise.all(left.map((name) => rm(join(dir, name), { recursive: true, force: true })));
}

async function spawnPgliteThread(workerData: { dataDir: string | undefined; template?: string }, origin: PgliteOrigin): Promise<PgliteHandle> {
  const worker = new Worker(new URL('./pglite-worker.mjs', import.meta.url), { workerData });
  const pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
  let nextId = 1;
  let closedBecause: Error | undefined;

  const failAll = (err: Error) => {
    closedBecause ??= err;
    for (const { reject } of pending.values()) reject(closedBecause);
    pending.clear();
  };
  worker.on('message', (reply: Reply) => {
    const call = pending.get(reply.id);
    if (!call) return;
    pending.delete(reply.id);
    if (reply.error) call.reject(Object.assign(new Error(reply.error.message), reply.error));
    else call.resolve(reply.result);
  });
  worker.on('error', (err) => failAll(new Error(`PGlite is closed: its thread failed (${err.message})`, { cause: err })));
  worker.on('exit', (code) => failAll(new Error(`PGlite is closed: its thread exited (code ${code})`)));

  const call = <T>(request: Request): Promise<T> => {
    if (closedBecause) return Promise.reject(closedBecause);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      worker.postMessage({ id, ...request });
    });
  };

  const queryable = (tx?: number): PgliteQueryable => ({
    query: async <R>(sql: string, params: unknown[] = [], options: PgliteQueryOptions = {}) =>
      call<PgliteResult<R>>({
        op: 'query',
        sql,
        params,
        ...(options.rowMode ? { rowMode: options.rowMode } : {}),
        ...(options.parsers ? { textTypes: textTypesOf(options.parsers) } : {}),
        ...(tx === undefined ? {} : { tx }),
      }),
    exec: (sql: string) => call<Array<PgliteResult<unknown>>>({ op: 'exec', sql, ...(tx === undefined ? {} : { tx }) }),
  });

  try {
    await call({ op: 'ready' });
  } catch (err) {
    await worker.terminate();
    throw err;
  }

  return {
    ...queryable(),
    origin,
    dumpDataDir: () => call({ op: 'dump' }),
    async transaction<T>(work: (tx: PgliteQueryable) => Promise<T>): Promise<T> {
      const tx = await call<number>({ op: 'begin' });
      let result: T;
      try {
        result = await work(queryable(tx));
      } catch (err) {
        await call({ op: 'end', tx, commit: false }).catch(() => undefined);
        throw err;
      }
      await call({ op: 'end', tx, commit: true });
      return result;
    },
    async close() {
      if (!closedBecause) {
        await call({ op: 'close' }).catch(() => undefined);
        closedBecause = new Error('PGlite is closed');
      }
      await worker.terminate();
    },
  };
}

const SAMPLE_TEXT = '2026-01-01 00:00:00+00';

/** The type ids of parsers that keep the text; anything else cannot run on the other thread. */
function textTypesOf(parsers: NonNullable<PgliteQueryOptions['parsers']>): number[] {
  return Object.entries(parsers).map(([oid, parse]) => {
    if (parse(SAMPLE_TEXT, Number(oid)) !== SAMPLE_TEXT) throw new Error(`a PGlite parser for type ${oid} that changes the value cannot cross threads`);
    return Number(oid);
  });
}
