import { expect } from 'chai';
import type { MessageRow } from '@chat/store';
import { toMessageResponse } from '@chat/wire-format';
import { GatewayHarness, roomEventsPath, TARGETS } from '../../test/gateway-harness.ts';
import { eventually } from '../../test/leak-probe.ts';
import { openSse, type SseClient } from '../../test/sse-client.ts';
import { countMessageReads, type StoreReads } from '../../test/store-read-counter.ts';

const BACKLOG = 20_000;
const PAGE = 200;
/** Appends in flight at once while filling the backlog: the store's batcher commits them in few transactions. */
const INSERT_CHUNK = 1000;
// 4 KiB bodies make the backlog ~85 MB of frames, far more than the socket buffers between the
// gateway and a client that does not read (~4.5 MB here: Node's 16 KiB plus the kernel's send and
// receive buffers), so the pause, not the end of the backlog, is what stops the replay.
const BODY = 'x'.repeat(4096);
/**
 * Rows the gateway may have read while the client does not read. Measured: 5 pages (the socket
 * buffers' worth plus the page in hand); 10 leaves room for larger kernel buffers elsewhere and is
 * still a tenth of the backlog.
 */
const PAUSED_READ_BOUND = 10 * PAGE;

/** Durable events the gateway wrote from the store, by its own delivery counter (one room here). */
async function deliveredFromStore(h: GatewayHarness): Promise<number> {
  const metric = await h.gateway.metrics.registry.getSingleMetric('chat_gateway_deliveries_total')!.get();
  return metric.values.filter((v) => v.labels['from'] === 'store').reduce((sum, v) => sum + v.value, 0);
}

/** Waits until `value` has not moved for `quietMs` and returns it: the gateway is waiting on the client. */
async function settled(value: () => number, quietMs: number): Promise<number> {
  let last = value();
  let since = Date.now();
  await eventually(
    () => {
      const now = value();
      if (now !== last) [last, since] = [now, Date.now()];
      return Date.now() - since >= quietMs;
    },
    `the value stopped at ${last}`,
    30_000,
  );
  return last;
}

for (const target of TARGETS) {
  describe(`replay of a very old cursor (${target})`, function () {
    this.timeout(120_000);
    const h = new GatewayHarness({ target, repositories: 1, engine: { replayPageSize: PAGE } });
    let client: SseClient | undefined;
    let reads: StoreReads | undefined;
    before(() => h.start());
    after(async () => {
      client?.close();
      reads?.restore();
      await h.stop();
    });

    it('streams a 20,000-message backlog from the store a page at a time, reading at most one page ahead of a client that does not read', async () => {
      const repo = h.repository();
      const scope = { repositoryId: repo.id, branchId: null };
      const rows: MessageRow[] = [];
      for (let from = 0; from < BACKLOG; from += INSERT_CHUNK) {
        const chunk = Array.from({ length: INSERT_CHUNK }, (_, i) => h.append(scope, `backlog ${from + i} ${BODY}`, { publish: false }));
        rows.push(...(await Promise.all(chunk)));
      }
      rows.sort((a, b) => a.seq - b.seq);
      expect(rows.map((r) => r.seq)).to.deep.equal(Array.from({ length: BACKLOG }, (_, i) => i + 1));

      // From the start (no cursor): the oldest possible position, the whole backlog behind it.
      reads = countMessageReads(h.gateway.deps.store, rows[0]!.roomId);
      client = await openSse(h.url, roomEventsPath(repo.id), await h.token());
      expect(client.response.status).to.equal(200);
      client.pause();
      const readWhilePaused = await settled(() => reads!.rows, 1000);
      const written = await deliveredFromStore(h);

      expect(reads.largestLimit, 'rows asked for per query').to.be.at.most(PAGE);
      // What the gateway holds for the stream beyond what the socket took is the page in hand.
      expect(readWhilePaused - written, `rows read (${readWhilePaused}) ahead of rows written (${written})`).to.be.within(0, PAGE);
      // And the socket took only what its buffers hold: the replay waits for the client instead of
      // buffering the backlog in the gateway (which would also pass the line above).
      expect(readWhilePaused, 'rows read while the client does not read').to.be.at.most(PAUSED_READ_BOUND);
      // Still open: a replay that waits for its client is not a slow consumer.
      expect(h.gateway.hub.stats().sessions).to.equal(1);

      client.resume();
      await client.waitForMessages(BACKLOG, 60_000);
      expect(client.messages().map((e) => e.id)).to.deep.equal(rows.map((r) => h.cursorOf(r)));
      const [first, last] = [client.messages()[0]!, client.messages().at(-1)!];
      expect([JSON.parse(first.data), JSON.parse(last.data)]).to.deep.equal([toMessageResponse(rows[0]!), toMessageResponse(rows.at(-1)!)]);
      // Every row read once, in full pages: nothing re-read, nothing read past the end.
      expect({ rows: reads.rows, queries: reads.queries }).to.deep.equal({ rows: BACKLOG, queries: BACKLOG / PAGE });
    });
  });
}
