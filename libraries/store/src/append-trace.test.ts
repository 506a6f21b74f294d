import { startInMemoryTracing, type InMemoryTracing } from '@chat/tracing/testing';
import { startRequestSpan } from '@chat/tracing';
import { expect } from 'chai';
import { ulid } from 'ulid';
import { newMessage } from '../test/new-message.ts';
import { openDatabase, type Database } from './database.ts';
import { migrate } from './migrate.ts';
import { createStore, type Store } from './store.ts';

/**
 * An append step's commit span with tracing on: appends of two requests that share one transaction
 * each get a span in their own request's trace, telling the transaction's size.
 */
describe('append commit spans (embedded database, tracing on)', function () {
  this.timeout(60_000);
  let database: Database;
  let store: Store;
  let tracing: InMemoryTracing;

  before(async () => {
    database = await openDatabase({ kind: 'pglite' });
    await migrate(database);
    store = createStore(database);
    tracing = startInMemoryTracing();
  });
  after(async () => {
    await tracing.stop();
    await database.close();
  });

  it('gives each request its own span of the shared transaction, with the batch size and what it committed', async () => {
    const rooms = [{ repositoryId: ulid(), branchId: null }, { repositoryId: ulid(), branchId: null }];
    const requests = rooms.map((_, i) => startRequestSpan({ method: 'POST', route: '/r', path: '/r', requestId: `req-${i}`, headers: {} })!);
    // Submitted in one event-loop turn: the store's batcher puts both into one statement.
    const outcomes = await Promise.all(rooms.map((scope, i) => requests[i]!.within(() => store.messages.append(scope, newMessage(), { newRoomId: ulid(), now: new Date() }))));
    requests.forEach((r) => r.end(201));
    const spans = tracing.spans();
    const servers = spans.filter((s) => s.name === 'POST /r');
    const commits = spans.filter((s) => s.name === 'append commit');
    expect(commits).to.have.length(2);
    outcomes.forEach((outcome, i) => {
      if (outcome.kind !== 'created') throw new Error('expected created');
      const commit = commits.find((c) => c.spanContext().traceId === servers[i]!.spanContext().traceId)!;
      expect(commit.parentSpanContext?.spanId).to.equal(servers[i]!.spanContext().spanId);
      expect(commit.attributes).to.deep.include({ 'chat.append.step': 'append', 'chat.append.batch_size': 2, 'chat.append.outcome': 'created', 'chat.scope_key': outcome.message.roomId, 'chat.seq': 1 });
      expect(commit.events.map((e) => e.name)).to.deep.equal(['transaction started']);
    });
  });

  it('records an exact retry as replayed and a hold as its own step, and traces no append outside a request', async () => {
    tracing.reset();
    const scope = { repositoryId: ulid(), branchId: null };
    const message = newMessage();
    const request = startRequestSpan({ method: 'POST', route: '/r', path: '/r', requestId: 'req', headers: {} })!;
    const held = await request.within(async () => {
      await store.messages.append(scope, message, { newRoomId: ulid(), now: new Date() });
      await store.messages.append(scope, message, { newRoomId: ulid(), now: new Date() });
      return store.messages.hold(scope, newMessage(), { newRoomId: ulid(), now: new Date() });
    });
    request.end(201);
    expect(held.kind).to.equal('held');
    await store.messages.append(scope, newMessage(), { newRoomId: ulid(), now: new Date() });
    expect(tracing.spans().map((s) => [s.name, s.attributes['chat.append.outcome']])).to.deep.equal([
      ['append commit', 'created'],
      ['append commit', 'replayed'],
      ['append hold', 'held'],
      ['POST /r', undefined],
    ]);
  });
});
