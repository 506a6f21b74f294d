/**
 * The notifier's dead letters, for operators: mention fanouts given up on after
 * NOTIFIER_MAX_ATTEMPTS failed attempts (docs/operations.md, "Mention fanouts dead-lettered").
 *
 *   node dist/dead-letters-cli.js list [--limit N]
 *   node dist/dead-letters-cli.js requeue --message <messageId> [--message <messageId> ...]
 *   node dist/dead-letters-cli.js requeue --room <roomId>
 *   node dist/dead-letters-cli.js requeue --all
 *
 * `list` prints one line per dead letter (message, room, seq, attempts, last error); `requeue` gives
 * the rows back to the notifiers as rows nobody has tried, and prints the message IDs requeued.
 * Exit status 2 on a usage error, 1 when the database cannot be reached.
 */
import { parseArgs } from 'node:util';
import { databaseFields, loadConfigOrExit, loadConfig } from '@chat/service-config';
import { createStore, openDatabase } from '@chat/store';
import { z } from 'zod';

const USAGE = 'usage: dead-letters-cli list [--limit N] | requeue (--message <id>... | --room <roomId> | --all)';

const EnvSchema = z.object({ DATABASE_URL: databaseFields.DATABASE_URL, DATABASE_POOLER: databaseFields.DATABASE_POOLER });

type Command = { name: 'list'; limit: number } | { name: 'requeue'; which: { messageIds: string[] } | { roomId: string } | { all: true } };

function parseCommand(argv: string[]): Command | string {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { limit: { type: 'string' }, message: { type: 'string', multiple: true }, room: { type: 'string' }, all: { type: 'boolean' } } });
  } catch (err) {
    return (err as Error).message;
  }
  const { positionals, values } = parsed;
  if (positionals.length !== 1) return 'name one command: list or requeue';
  if (positionals[0] === 'list') {
    const limit = values.limit === undefined ? 100 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) return '--limit takes a whole number from 1 to 10000';
    return { name: 'list', limit };
  }
  if (positionals[0] !== 'requeue') return `unknown command ${JSON.stringify(positionals[0])}`;
  const chosen = [values.message !== undefined, values.room !== undefined, values.all === true].filter(Boolean).length;
  if (chosen !== 1) return 'requeue takes exactly one of --message, --room, --all';
  if (values.message) return { name: 'requeue', which: { messageIds: values.message } };
  if (values.room) return { name: 'requeue', which: { roomId: values.room } };
  return { name: 'requeue', which: { all: true } };
}

const command = parseCommand(process.argv.slice(2));
if (typeof command === 'string') {
  process.stderr.write(`${command}\n${USAGE}\n`);
  process.exit(2);
}
const config = loadConfigOrExit(() => loadConfig(EnvSchema, process.env, (e) => ({ url: e.DATABASE_URL, pooler: e.DATABASE_POOLER })));
if (!config.url) {
  process.stderr.write('DATABASE_URL is required: the dead letters are in PostgreSQL\n');
  process.exit(2);
}
const database = await openDatabase({ kind: 'postgres', url: config.url, pooler: config.pooler, poolSize: 2 });
try {
  const fanouts = createStore(database).mentionFanout;
  if (command.name === 'list') {
    for (const row of await fanouts.listDead(command.limit)) {
      const error = (row.lastError ?? '').replace(/\s+/g, ' ').slice(0, 200);
      process.stdout.write(`${row.messageId}\troom=${row.roomId}\tseq=${row.seq}\tattempts=${row.attempts}\t${error}\n`);
    }
  } else {
    const requeued = await fanouts.requeueDead(command.which);
    for (const id of requeued) process.stdout.write(`${id}\n`);
    process.stderr.write(`requeued ${requeued.length}\n`);
  }
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await database.close();
}
