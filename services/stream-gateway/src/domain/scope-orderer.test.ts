import { expect } from 'chai';
import pino from 'pino';
import type { Backbone, DeliveredEvent } from '@chat/backbone';
import type { LiveEvent } from './live-event.ts';
import { ScopeOrderer, type OrderedScope } from './scope-orderer.ts';
import type { SourceItem } from './stream-source.ts';
import { StreamHub, type HubSession } from './stream-hub.ts';

const GRACE = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const logger = pino({ level: 'silent' });

/** A store of one scope: items 1..committed, read through a counted `readAfter`. */
function fakeStore(committed: number) {
  const store = {
    committed,
    reads: [] as number[],
    fail: false,
    delayMs: 1,
    async readAfter(afterSeq: number, limit: number): Promise<SourceItem[]> {
      store.reads.push(afterSeq);
      await sleep(store.delayMs);
      if (store.fail) throw new Error('store down');
      const items: SourceItem[] = [];
      for (let seq = afterSeq + 1; seq <= store.committed && items.length < limit; seq++) items.push({ seq, data: `stored ${seq}` });
      return items;
    },
  };
  return store;
}

function orderer(committed = 100, pageSize = 200) {
  const delivered: LiveEvent[] = [];
  const store = fakeStore(committed);
  let fillsFailed = 0;
  const scope: OrderedScope = {
    scopeKey: 'room',
    deliver: (e) => delivered.push(e),
    readAfter: (a, l) => store.readAfter(a, l),
    fillFailed: () => (fillsFailed += 1),
  };
  const o = new ScopeOrderer(scope, { gapGraceMs: GRACE, replayPageSize: pageSize, maxPendingEvents: 5 }, logger);
  return { o, store, delivered, seqs: () => delivered.map((e) => e.seq), fillsFailed: () => fillsFailed };
}

describe('ScopeOrderer', () => {
  it('delivers in-order events at once, with no timer', () => {
    const { o, seqs, store } = orderer();
    o.baseline(5);
    for (const seq of [6, 7, 8]) o.accept(seq, `live ${seq}`);
    expect(seqs()).to.deep.equal([6, 7, 8]);
    expect(o.waiting).to.equal(false);
    expect(store.reads).to.deep.equal([]);
  });

  it('holds an event ahead of a gap and delivers both when the missing one arrives within the wait', async () => {
    const { o, seqs, store, delivered } = orderer();
    o.baseline(5);
    o.accept(7, 'live 7');
    expect(seqs()).to.deep.equal([]);
    expect(o.waiting).to.equal(true);
    o.accept(6, 'live 6');
    expect(seqs()).to.deep.equal([6, 7]);
    expect(delivered[1]!.payload).to.equal('live 7');
    expect(o.waiting).to.equal(false);
    await sleep(GRACE * 3);
    expect(store.reads).to.deep.equal([]);
  });

  it('fills a gap with one store read after the wait, then delivers what it held', async () => {
    const { o, seqs, store, delivered } = orderer();
    o.baseline(5);
    o.accept(8, 'live 8');
    o.accept(9, 'live 9');
    await sleep(GRACE * 4);
    expect(store.reads).to.deep.equal([5]);
    expect(seqs()).to.deep.equal([6, 7, 8, 9]);
    expect(delivered.map((e) => e.payload)).to.deep.equal(['stored 6', 'stored 7', 'live 8', 'live 9']);
    expect(delivered.map((e) => e.fromStore)).to.deep.equal([true, true, false, false]);
    expect(o.waiting).to.equal(false);
    expect(o.heldCount).to.equal(0);
    o.accept(10, 'live 10');
    expect(seqs().at(-1)).to.equal(10);
  });

  it('keeps reading while pages come back full', async () => {
    const { o, seqs, store } = orderer(100, 2);
    o.baseline(0);
    o.accept(6, 'live 6');
    await sleep(GRACE * 4);
    expect(store.reads).to.deep.equal([0, 2, 4]);
    expect(seqs()).to.deep.equal([1, 2, 3, 4, 5, 6]);
  });

  it('drops late and repeated events, and holds a repeat ahead of a gap only once', async () => {
    const { o, seqs } = orderer();
    o.baseline(5);
    o.accept(6, 'live 6');
    o.accept(6, 'live 6');
    o.accept(5, 'live 5');
    o.accept(8, 'live 8');
    o.accept(8, 'live 8');
    expect(o.heldCount).to.equal(1);
    o.accept(7, 'live 7');
    expect(seqs()).to.deep.equal([6, 7, 8]);
    o.accept(7, 'live 7');
    expect(seqs()).to.deep.equal([6, 7, 8]);
  });

  it('holds events seen before any baseline, however long it takes, and orders those after it once a stream reports its snapshot', async () => {
    const { o, seqs, store } = orderer();
    o.accept(9, 'live 9');
    o.accept(7, 'live 7');
    o.accept(5, 'live 5');
    await sleep(GRACE * 3);
    expect(seqs()).to.deep.equal([]);
    expect(o.waiting).to.equal(false);
    expect(store.reads).to.deep.equal([]);
    // 5 is at the snapshot: the stream replays it. 6 is missing; 7 goes out once it is filled.
    expect(o.baseline(5)).to.equal(5);
    expect(seqs()).to.deep.equal([]);
    o.accept(6, 'live 6');
    expect(seqs()).to.deep.equal([6, 7]);
    await sleep(GRACE * 4);
    expect(store.reads).to.deep.equal([7]);
    expect(seqs()).to.deep.equal([6, 7, 8, 9]);
  });

  it('raises a later snapshot to what already went out: the barrier its stream replays through', () => {
    const { o } = orderer();
    expect(o.baseline(5)).to.equal(5);
    for (const seq of [6, 7, 8]) o.accept(seq, `live ${seq}`);
    expect(o.baseline(6)).to.equal(8);
    expect(o.baseline(10)).to.equal(10);
    expect(o.deliveredThrough).to.equal(8);
  });

  it('keeps what it holds while the store cannot fill the gap, and reads again when the next event arrives', async () => {
    const { o, seqs, store } = orderer(6);
    o.baseline(5);
    o.accept(8, 'live 8');
    // 6 is filled; 7 is not in the store: another grace, another read, then it waits.
    await sleep(GRACE * 6);
    expect(store.reads).to.deep.equal([5, 6]);
    expect(seqs()).to.deep.equal([6]);
    expect(o.heldCount).to.equal(1);
    expect(o.waiting).to.equal(false);
    store.committed = 9;
    o.accept(9, 'live 9');
    await sleep(GRACE * 4);
    expect(store.reads).to.deep.equal([5, 6, 6]);
    expect(seqs()).to.deep.equal([6, 7, 8, 9]);
    expect(o.heldCount).to.equal(0);
  });

  it('closes the streams of its scope when the store read fails, and passes nothing on out of order', async () => {
    const { o, seqs, store, fillsFailed } = orderer();
    store.fail = true;
    o.baseline(5);
    o.accept(7, 'live 7');
    await sleep(GRACE * 3);
    expect(fillsFailed()).to.equal(1);
    expect(seqs()).to.deep.equal([]);
  });

  it('holds at most maxPendingEvents ahead of a gap, and reads the rest from the store with the gap', async () => {
    const { o, seqs, delivered, store } = orderer();
    o.baseline(0);
    for (const seq of [3, 4, 5, 6, 7, 8, 9]) o.accept(seq, `live ${seq}`);
    expect(seqs()).to.deep.equal([]);
    expect(o.heldCount).to.equal(5);
    await sleep(GRACE * 4);
    expect(store.reads).to.deep.equal([0]);
    expect(seqs()).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(delivered.map((e) => e.fromStore)).to.deep.equal([true, true, false, false, false, false, false, true, true]);
    expect(o.heldCount).to.equal(0);
    o.accept(11, 'live 11');
    o.accept(10, 'live 10');
    expect(seqs().slice(-2)).to.deep.equal([10, 11]);
  });

  it('drops its timer and held events on dispose, and ignores a read in flight', async () => {
    const a = orderer();
    a.o.baseline(5);
    a.o.accept(7, 'live 7');
    expect(a.o.waiting).to.equal(true);
    a.o.dispose();
    expect(a.o.waiting).to.equal(false);
    expect(a.o.heldCount).to.equal(0);
    await sleep(GRACE * 3);
    expect(a.store.reads).to.deep.equal([]);
    expect(a.seqs()).to.deep.equal([]);

    const b = orderer();
    b.store.delayMs = 50;
    b.o.baseline(5);
    b.o.accept(7, 'live 7');
    await sleep(GRACE + 15);
    expect(b.store.reads).to.deep.equal([5]);
    b.o.dispose();
    await sleep(80);
    expect(b.seqs()).to.deep.equal([]);
  });
});

/** A hub on a fake backbone, with recorded fake streams of one room. */
function hubHarness() {
  const handlers = new Map<string, (e: DeliveredEvent) => void>();
  const backbone = {
    async subscribe(channel: string, handler: (e: DeliveredEvent) => void) {
      handlers.set(channel, handler);
      return { close: async () => undefined };
    },
    async ping() {},
  } as unknown as Backbone;
  const hub = new StreamHub({ backbone, logger, ordering: { gapGraceMs: GRACE, replayPageSize: 200, maxPendingEvents: 1000 }, tickMs: 60_000 });
  const store = fakeStore(100);
  const session = (scopeKey = 'room', inbox = false) => {
    const seen: LiveEvent[] = [];
    const s: HubSession & { seen: LiveEvent[] } = {
      seen,
      source: inbox
        ? { channel: 'notifications', scopeKey, readAfter: (a, l) => store.readAfter(a, l), fromLive: (_seq, payload) => payload }
        : { channel: 'messages', scopeKey, readAfter: (a, l) => store.readAfter(a, l) },
      onLive: (e) => seen.push(e),
      tick: () => undefined,
      rotateNoLaterThan: () => s.close('rotation'),
      close: () => hub.unregister(s),
    };
    return s;
  };
  const publish = (seq: number, scopeKey = 'room', channel: 'messages' | 'notifications' = 'messages') =>
    handlers.get(channel)!({ channel, scopeKey, seq, data: `live ${seq}`, entryId: `0-${seq}` });
  return { hub, store, session, publish };
}

describe('StreamHub ordering per scope', () => {
  it('delivers one shared event object per seq to every stream of the room, in order', async () => {
    const { hub, session, publish } = hubHarness();
    const a = session();
    const b = session();
    await hub.register(a);
    await hub.register(b);
    hub.snapshotTaken(a, 10);
    publish(12);
    publish(11);
    expect(a.seen.map((e) => e.seq)).to.deep.equal([11, 12]);
    expect(b.seen).to.deep.equal(a.seen);
    expect(a.seen[0]).to.equal(b.seen[0]);
    await hub.close();
  });

  it('gives a stream that joins mid-gap the filled events too, from one read', async () => {
    const { hub, store, session, publish } = hubHarness();
    const a = session();
    await hub.register(a);
    hub.snapshotTaken(a, 10);
    publish(13);
    const late = session();
    await hub.register(late);
    hub.snapshotTaken(late, 13);
    await sleep(GRACE * 4);
    expect(store.reads).to.deep.equal([10]);
    expect(a.seen.map((e) => e.seq)).to.deep.equal([11, 12, 13]);
    expect(late.seen.map((e) => e.seq)).to.deep.equal([11, 12, 13]);
    expect(late.seen[0]).to.equal(a.seen[0]);
    await hub.close();
  });

  it('takes the orderer, its timer and held events with the last stream of the scope', async () => {
    const { hub, store, session, publish } = hubHarness();
    const a = session();
    await hub.register(a);
    hub.snapshotTaken(a, 10);
    publish(12);
    a.close('client_closed');
    expect(hub.stats()).to.include({ sessions: 0, scopes: 0 });
    await sleep(GRACE * 3);
    expect(store.reads).to.deep.equal([]);
    expect(a.seen).to.deep.equal([]);
    // A new stream of the same room starts from its own snapshot.
    const b = session();
    await hub.register(b);
    hub.snapshotTaken(b, 12);
    publish(13);
    expect(b.seen.map((e) => e.seq)).to.deep.equal([13]);
    await hub.close();
  });

  it('keeps rooms apart and orders inbox streams the same way', async () => {
    const { hub, session, publish } = hubHarness();
    const r1 = session('r1');
    const r2 = session('r2');
    await hub.register(r1);
    await hub.register(r2);
    hub.snapshotTaken(r1, 0);
    hub.snapshotTaken(r2, 5);
    publish(2, 'r1');
    publish(6, 'r2');
    publish(1, 'r1');
    expect(r1.seen.map((e) => e.seq)).to.deep.equal([1, 2]);
    expect(r2.seen.map((e) => e.seq)).to.deep.equal([6]);
    const inbox = session('inbox', true);
    await hub.register(inbox);
    // An inbox stream reads its own snapshot (and checkpoint) even when its scope already streams.
    expect(hub.deliveredThrough(inbox)).to.equal(undefined);
    hub.snapshotTaken(inbox, 0);
    publish(2, 'inbox', 'notifications');
    publish(1, 'inbox', 'notifications');
    publish(1, 'inbox', 'notifications');
    expect(inbox.seen.map((e) => e.seq)).to.deep.equal([1, 2]);
    await hub.close();
  });

  it('gives a stream whose snapshot is below what went out the higher barrier', async () => {
    const { hub, session, publish } = hubHarness();
    const a = session();
    const b = session();
    await hub.register(a);
    await hub.register(b);
    expect(hub.deliveredThrough(a)).to.equal(undefined);
    publish(11);
    publish(12);
    expect(hub.snapshotTaken(a, 10)).to.equal(10);
    expect(hub.deliveredThrough(b)).to.equal(12);
    // b read its snapshot before 11 and 12 committed; they went out before it reported it.
    expect(hub.snapshotTaken(b, 9)).to.equal(12);
    expect(b.seen.map((e) => e.seq)).to.deep.equal([11, 12]);
    await hub.close();
  });

  it('closes every stream of the scope when the gap-fill read fails', async () => {
    const { hub, store, session, publish } = hubHarness();
    const closed: string[] = [];
    const a = session();
    const b = session();
    const other = session('other');
    for (const s of [a, b]) {
      s.close = (reason) => {
        closed.push(reason);
        hub.unregister(s);
      };
    }
    for (const s of [a, b, other]) await hub.register(s);
    hub.snapshotTaken(a, 10);
    hub.snapshotTaken(other, 10);
    store.fail = true;
    publish(12);
    await sleep(GRACE * 3);
    expect(closed).to.deep.equal(['store_error', 'store_error']);
    expect(hub.stats()).to.include({ sessions: 1, scopes: 1 });
    expect(a.seen).to.deep.equal([]);
    await hub.close();
  });
});
