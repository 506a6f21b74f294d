import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import pino from 'pino';
import type { StreamLease } from '@chat/stream-caps';
import { EncodedFrame } from './encoded-frame.ts';
import { LiveEvent } from './live-event.ts';
import type { SseOutput } from './sse-output.ts';
import { StreamSession, type CloseReason, type PartitionFilter, type SessionEngine } from './stream-session.ts';
import type { SourceItem, StreamSource } from './stream-source.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `condition` holds: the session's store reads finish on timers, which a busy machine delays. */
async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(2);
  }
}

/** Whether the session has finished its replay (its last store read answered). */
const replayed = (session: StreamSession) => !(session as unknown as { replaying: boolean }).replaying;

/** A stream on a fake scope whose store holds items 1..committed, writing into a recorded output. */
/** The partition of an item of the fake partitioned scope: its seq's parity. */
const parityOf = (seq: number) => (seq % 2 === 0 ? 'even' : 'odd');

function harness(options: { committed?: number; afterSeq?: number; maxPendingEvents?: number; inbox?: boolean; filter?: PartitionFilter } = {}) {
  const written: Array<string | EncodedFrame> = [];
  const reads: number[] = [];
  const closes: CloseReason[] = [];
  const deliveries = { store: 0, live: 0 };
  let unregistered = 0;
  const store = { committed: options.committed ?? 0 };
  const partitionReads: string[] = [];
  const response = new EventEmitter();
  const output = {
    response,
    backedUp: false,
    write: (frame: string | EncodedFrame) => written.push(frame) > 0,
    whenWritable: async () => undefined,
    end: () => undefined,
    destroy: () => undefined,
  } as unknown as SseOutput;
  const source: StreamSource = {
    channel: options.inbox ? 'notifications' : 'messages',
    scopeKey: 'scope',
    eventName: options.inbox ? 'notification' : 'message',
    highWater: async () => store.committed,
    async readAfter(afterSeq: number, limit: number): Promise<SourceItem[]> {
      reads.push(afterSeq);
      await sleep(1);
      const items: SourceItem[] = [];
      for (let seq = afterSeq + 1; seq <= store.committed && items.length < limit; seq++) {
        items.push({ seq, data: `{"stored":${seq}}`, ...(options.filter ? { partition: parityOf(seq) } : {}) });
      }
      return items;
    },
    cursorFor: (seq) => `c${seq}`,
    ...(options.inbox ? { fromLive: (seq: number) => `{"live":${seq}}` } : {}),
    ...(options.filter
      ? {
          partitionOf: (payload: string) => {
            partitionReads.push(payload);
            return parityOf((JSON.parse(payload) as { published: number }).published);
          },
        }
      : {}),
  };
  const engine: SessionEngine = {
    settings: { heartbeatMs: 60_000, maxStreamAgeMs: 3_600_000, recheckMs: 60_000, tokenExpiryMarginMs: 0, replayPageSize: 2, maxPendingEvents: options.maxPendingEvents ?? 100, gapGraceMs: 10 },
    logger: pino({ level: 'silent' }),
    now: Date.now,
    hub: { unregister: () => (unregistered += 1) },
    metrics: {
      delivered: (_kind, from) => (deliveries[from] += 1),
      streamClosed: (_kind, reason) => closes.push(reason),
    },
  };
  const session = new StreamSession({
    engine,
    source,
    afterSeq: options.afterSeq ?? 0,
    grant: { expiresAt: new Date(Date.now() + 3_600_000), recheck: async () => 'allowed' },
    filter: options.filter,
    lease: { release: async () => undefined } as unknown as StreamLease,
    output,
  });
  const text = (frame: string | EncodedFrame) => (typeof frame === 'string' ? frame : frame.bytes.toString('utf8'));
  return {
    session,
    store,
    reads,
    partitionReads,
    closes,
    deliveries,
    response,
    written,
    unregistered: () => unregistered,
    /** Seq and data of every durable frame written. */
    sent: () => written.map(text).map((f) => `${/^id: c(\d+)/.exec(f)![1]} ${/data: (.*)/.exec(f)![1]}`),
    live: (seq: number, fromStore = false) => session.onLive(new LiveEvent(seq, fromStore ? `{"stored":${seq}}` : `{"published":${seq}}`, fromStore)),
  };
}

describe('StreamSession: writes what it is given, in order', () => {
  it('replays through its barrier, writes what arrived meanwhile, then writes live events as they come', async () => {
    const h = harness({ committed: 3 });
    h.live(4);
    h.live(2);
    h.session.replayThrough(3);
    h.session.begin();
    h.live(5);
    await until(() => h.sent().length === 5 && replayed(h.session));
    h.live(6);
    h.live(6);
    h.live(3);
    expect(h.sent()).to.deep.equal(['1 {"stored":1}', '2 {"stored":2}', '3 {"stored":3}', '4 {"published":4}', '5 {"published":5}', '6 {"published":6}']);
    expect(h.reads).to.deep.equal([0, 2]);
    expect(h.deliveries).to.deep.equal({ store: 3, live: 3 });
    expect(h.closes).to.deep.equal([]);
  });

  it('holds at most maxPendingEvents while it replays, and reads the rest from the store', async () => {
    const h = harness({ committed: 8, maxPendingEvents: 2 });
    h.session.replayThrough(2);
    for (const seq of [3, 4, 5, 6, 7, 8]) h.live(seq);
    h.session.begin();
    await until(() => h.sent().length === 8 && replayed(h.session));
    expect(h.sent().map((f) => Number(f.split(' ')[0]))).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(h.reads).to.deep.equal([0, 4, 6]);
    h.live(9);
    expect(h.sent().at(-1)).to.equal('9 {"published":9}');
  });

  it('closes rather than write past a skipped seq', async () => {
    const h = harness({ afterSeq: 5, committed: 5 });
    h.session.replayThrough(5);
    h.session.begin();
    await sleep(5);
    h.live(6);
    h.live(8);
    h.live(7);
    expect(h.sent().map((f) => f.split(' ')[0])).to.deep.equal(['6']);
    expect(h.closes).to.deep.equal(['source_error']);
    expect(h.unregistered()).to.equal(1);
  });

  it('writes an inbox event the orderer read from the store as its data, in the frame every stream of the inbox shares', async () => {
    const h = harness({ inbox: true });
    h.session.begin();
    await sleep(5);
    const filled = new LiveEvent(1, '{"stored":1}', true);
    h.session.onLive(filled);
    h.live(2);
    expect(h.sent()).to.deep.equal(['1 {"stored":1}', '2 {"live":2}']);
    expect(h.written[0]).to.be.instanceOf(EncodedFrame).and.to.equal(filled.sharedFrame(h.session.source));
    expect(h.written[1]).to.be.a('string');
    expect(h.deliveries).to.deep.equal({ store: 1, live: 1 });
  });

  it('sends only the items its filter admits, from the store and live, and moves past the others without closing; the filter may change', async () => {
    const admitted = new Set(['odd']);
    const filter: PartitionFilter = { admits: (partition) => partition !== undefined && admitted.has(partition) };
    const h = harness({ committed: 4, filter });
    const other = harness({ filter: { admits: () => true } });
    h.session.replayThrough(4);
    h.session.begin();
    await until(() => h.reads.length === 2 && replayed(h.session));
    for (const seq of [5, 6, 7]) h.live(seq);
    const filled = new LiveEvent(8, '{"stored":8}', true, 'even');
    h.session.onLive(filled);
    admitted.add('even');
    h.live(9);
    h.live(10);
    h.live(9);
    expect(h.sent().map((f) => Number(f.split(' ')[0]))).to.deep.equal([1, 3, 5, 7, 9, 10]);
    expect(h.closes).to.deep.equal([]);
    expect(h.deliveries).to.deep.equal({ store: 2, live: 4 });

    // A live event's partition is read from its payload once, for every stream of the scope.
    other.session.begin();
    await sleep(5);
    const shared = new LiveEvent(1, '{"published":1}');
    h.partitionReads.length = 0;
    other.session.onLive(shared);
    expect(shared.partitionIn(h.session.source)).to.equal('odd');
    expect([...h.partitionReads, ...other.partitionReads]).to.deep.equal(['{"published":1}']);
    expect(filled.partitionIn(h.session.source)).to.equal('even');
  });

  it('ends once when its client leaves: unregisters, counts the close and stops listening to the response', async () => {
    const h = harness();
    expect(h.response.listenerCount('close')).to.equal(1);
    h.response.emit('close');
    h.response.emit('close');
    h.session.close('shutdown');
    expect(h.closes).to.deep.equal(['client_closed']);
    expect(h.unregistered()).to.equal(1);
    expect(h.response.listenerCount('close')).to.equal(0);
    expect(h.session.closed).to.equal(true);
  });
});
