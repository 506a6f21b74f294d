/**
 * One process of the racing-appends test (append-rate.test.ts): opens its own pool on the test
 * database, appends `count` messages at once, all under one budget across rooms, and prints the
 * outcome kinds as one JSON line. Usage: append-under-budget.ts <senderId> <repositoryIds,comma>
 * <limit> <count>
 */
import { ulid } from 'ulid';
import { createStore, openDatabase } from '../src/index.ts';
import { newMessage } from './new-message.ts';
import { TEST_DATABASE_URL } from './targets.ts';

const [senderId, repositories, limit, count] = process.argv.slice(2);
if (senderId === undefined || repositories === undefined || count === undefined) {
  throw new Error('usage: append-under-budget.ts <senderId> <repositoryIds> <limit> <count>');
}
const database = await openDatabase({ kind: 'postgres', url: TEST_DATABASE_URL, poolSize: 4 });
const store = createStore(database);
const rooms = repositories.split(',');
// One window of ten years: every process's appends fall in it.
const rateLimit = { limit: Number(limit), windowSeconds: 10 * 365 * 86_400, per: 'sender' } as const;
const kinds = await Promise.all(
  Array.from({ length: Number(count) }, async (_, i) => {
    const outcome = await store.messages.append(
      { repositoryId: rooms[i % rooms.length]!, branchId: null },
      newMessage({
        senderKind: 'bot',
        senderId,
        bodyMarkdown: `racing ${i}`,
        bodyBytes: `racing ${i}`.length,
        renderedHtml: `<p>racing ${i}</p>\n`,
        authorizationDecisionId: null,
        authorizingSubjectId: null,
        authorizingSubjectKind: null,
      }),
      { newRoomId: ulid(), now: new Date(), rateLimit },
    );
    return outcome.kind;
  }),
);
process.stdout.write(`${JSON.stringify(kinds)}\n`);
await database.close();
