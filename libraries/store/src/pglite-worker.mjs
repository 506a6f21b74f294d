// The embedded database's own thread (see pglite-thread.ts). Plain JavaScript on purpose: a worker
// does not inherit the tsx loader when the process was started by the `tsx` command.
//
// Requests: { id, op, ... }; replies: { id, result } or { id, error }. Queries and execs run on the
// database, or inside the open transaction `tx` when given. A transaction holds PGlite's lock from
// `begin` until `end`, exactly as PGlite.transaction() does in one thread.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';

const ROLLBACK = Symbol('rollback');
const keepText = (value) => value;

const db = open(workerData);
/** Open transactions by id: PGlite's transaction handle and how to end it. */
const transactions = new Map();
let nextTransactionId = 1;

parentPort.on('message', (request) => {
  run(request).then(
    (result) => parentPort.postMessage({ id: request.id, result }),
    (err) => parentPort.postMessage({ id: request.id, error: plainError(err) }),
  );
});

async function run(request) {
  switch (request.op) {
    case 'ready':
      await db.waitReady;
      return null;
    case 'query': {
      const result = await on(request.tx).query(request.sql, request.params, queryOptions(request));
      return { rows: result.rows, fields: result.fields, affectedRows: result.affectedRows };
    }
    case 'exec': {
      const results = await on(request.tx).exec(request.sql);
      return results.map((r) => ({ rows: r.rows, fields: r.fields, affectedRows: r.affectedRows }));
    }
    case 'begin':
      return begin();
    case 'end':
      return end(request.tx, request.commit);
    case 'close':
      await db.close();
      return null;
    case 'dump':
      return dump();
    default:
      throw new Error(`unknown PGlite thread request ${String(request.op)}`);
  }
}

/**
 * `template`: the path of a data directory tarball (see pglite-template.ts) that an empty `dataDir`
 * starts from instead of initdb. Its manifest must name the PGlite installed here: a data directory
 * written by another PostgreSQL build may not load.
 */
function open({ dataDir, template }) {
  // pg_trgm and btree_gin index message search (migrations/0010_message_search.sql,
  // 0012_message_search_by_repository.sql); a data directory that has them installed opens only with
  // them loaded.
  const extensions = { pg_trgm, btree_gin };
  if (!dataDir) return new PGlite({ extensions });
  if (!template) return new PGlite(dataDir, { extensions });
  const manifest = JSON.parse(readFileSync(`${template}.json`, 'utf8'));
  const installed = installedPgliteVersion();
  if (manifest.pglite !== installed) throw new Error(`the PGlite template was built with PGlite ${manifest.pglite}, this is ${installed}`);
  return new PGlite(dataDir, { extensions, loadDataDir: new Blob([readFileSync(template)]) });
}

function installedPgliteVersion() {
  // The package exports no package.json; its main module is dist/index.cjs.
  const main = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  return JSON.parse(readFileSync(join(dirname(main), '..', 'package.json'), 'utf8')).version;
}

/** The data directory as a gzipped tarball, with everything written so far in its data files. */
async function dump() {
  await db.exec('CHECKPOINT');
  const tarball = await db.dumpDataDir('gzip');
  return { pglite: installedPgliteVersion(), tarball: new Uint8Array(await tarball.arrayBuffer()) };
}

function on(transactionId) {
  if (transactionId === undefined) return db;
  const open = transactions.get(transactionId);
  if (!open) throw new Error(`transaction ${transactionId} is not open`);
  return open.tx;
}

/** Parsers cannot cross threads; the only ones the callers use keep a type's text as it is. */
function queryOptions(request) {
  const options = {};
  if (request.rowMode) options.rowMode = request.rowMode;
  if (request.textTypes) options.parsers = Object.fromEntries(request.textTypes.map((oid) => [oid, keepText]));
  return options;
}

function begin() {
  const id = nextTransactionId++;
  const open = { tx: undefined, commit: undefined, rollback: undefined, finished: undefined };
  return new Promise((resolveBegin, rejectBegin) => {
    open.finished = db.transaction(
      (tx) =>
        new Promise((commit, rollback) => {
          Object.assign(open, { tx, commit, rollback: () => rollback(ROLLBACK) });
          transactions.set(id, open);
          resolveBegin(id);
        }),
    );
    // Rejects `begin` when BEGIN itself failed; once begun, `end` reports how it finished.
    open.finished.catch(rejectBegin);
  });
}

async function end(transactionId, commit) {
  const open = transactions.get(transactionId);
  if (!open) throw new Error(`transaction ${transactionId} is not open`);
  transactions.delete(transactionId);
  if (commit) open.commit();
  else open.rollback();
  try {
    await open.finished;
  } catch (err) {
    if (err !== ROLLBACK) throw err;
  }
  return null;
}

function plainError(err) {
  if (!(err instanceof Error)) return { message: String(err) };
  const fields = {};
  for (const [key, value] of Object.entries(err)) {
    if (value === undefined || typeof value === 'function' || typeof value === 'object') continue;
    fields[key] = value;
  }
  return { ...fields, name: err.name, message: err.message };
}
