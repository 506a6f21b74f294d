import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Backbone, BackboneEvent, Channel, Consumer, DeliveredEvent } from '../src/backbone.ts';

/** Settings a contract test may need from the backbone under test. */
interface ContractBackboneOptions {
  /** Retention floor of the trimmer; trimming tests pass 0. */
  retentionMs?: number;
}

/** Makes a fresh backbone with its own key space (one per test). */
type BackboneFactory = (opts: ContractBackboneOptions) => Promise<Backbone>;

export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function events(channel: Channel, scopeKey: string, fromSeq: number, count: number): BackboneEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    channel,
    scopeKey,
    seq: fromSeq + i,
    data: JSON.stringify({ scopeKey, seq: fromSeq + i }),
  }));
}

const scope = (): string => `room-${randomUUID()}`;
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const seqsOf = (received: DeliveredEvent[], scopeKey: string): number[] =>
  received.filter((e) => e.scopeKey === scopeKey).map((e) => e.seq);

/**
 * The behaviour every backbone implementation must show, run against each of them. The factory
 * is called once per test; the backbones it made are closed after each test.
 */
export function runBackboneContract(name: string, factory: BackboneFactory): void {
  describe(`${name} (backbone contract)`, function () {
    this.timeout(20_000);
    const opened: Backbone[] = [];
    const open = async (opts: ContractBackboneOptions = {}): Promise<Backbone> => {
      const backbone = await factory(opts);
      opened.push(backbone);
      return backbone;
    };
    const consumers: Consumer[] = [];
    const track = (c: Consumer): Consumer => (consumers.push(c), c);

    afterEach(async () => {
      await Promise.all(consumers.splice(0).map((c) => c.stop()));
      await Promise.all(opened.splice(0).map((b) => b.close()));
    });

    it('delivers to a subscriber every event in publish order per scope, only on its channel', async () => {
      const backbone = await open();
      const received: DeliveredEvent[] = [];
      const sub = await backbone.subscribe('messages', (e) => received.push(e));
      const [a, b, c] = [scope(), scope(), scope()];
      for (let round = 0; round < 3; round++) {
        const from = round * 10 + 1;
        await backbone.publish([...events('messages', a, from, 10), ...events('messages', b, from, 10)]);
        await backbone.publish([...events('notifications', c, from, 10), ...events('messages', c, from, 10)]);
      }
      await waitFor(() => received.length >= 90, 5000, '90 events');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(received).to.have.length(90);
      for (const key of [a, b, c]) expect(seqsOf(received, key)).to.deep.equal(range(1, 30));
      expect(received.every((e) => e.channel === 'messages')).to.equal(true);
      expect(new Set(received.map((e) => `${e.scopeKey}/${e.entryId}`)).size).to.equal(90);
      const first = received.find((e) => e.scopeKey === a && e.seq === 1);
      expect(first?.data).to.equal(JSON.stringify({ scopeKey: a, seq: 1 }));
      await sub.close();
    });

    it('is listener first: an event published right after subscribe resolves arrives, earlier ones do not', async () => {
      const backbone = await open();
      const key = scope();
      await backbone.publish(events('messages', key, 1, 1));
      const received: DeliveredEvent[] = [];
      const sub = await backbone.subscribe('messages', (e) => received.push(e));
      await backbone.publish(events('messages', key, 2, 1));
      await waitFor(() => received.length >= 1, 5000, 'the event after subscribe');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(received.map((e) => e.seq)).to.deep.equal([2]);
      await sub.close();
    });

    it("carries an event's traceparent to subscribers and consumer groups, and events without one stay without", async () => {
      const backbone = await open();
      const key = scope();
      const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      const live: DeliveredEvent[] = [];
      const grouped: DeliveredEvent[] = [];
      const sub = await backbone.subscribe('mentions', (e) => live.push(e));
      track(await backbone.consume({ channel: 'mentions', group: `g-${randomUUID()}`, consumer: 'c1', blockMs: 50 }, async (e) => void grouped.push(e)));
      const [traced, untraced] = events('mentions', key, 1, 2) as [BackboneEvent, BackboneEvent];
      // One call of one event and one of two: the single-event and the batched publish paths.
      await backbone.publish([{ ...traced, traceparent }]);
      await backbone.publish([untraced, { ...events('mentions', key, 3, 1)[0]!, traceparent }]);
      await waitFor(() => live.length >= 3 && grouped.length >= 3, 5000, 'three events on both paths');
      for (const received of [live, grouped]) {
        expect(received.map((e) => e.traceparent)).to.deep.equal([traceparent, undefined, traceparent]);
        expect('traceparent' in received[1]!, 'an untraced event has no traceparent field').to.equal(false);
      }
      await sub.close();
    });

    it('fans out to several subscribers; closing one stops only that one', async () => {
      const backbone = await open();
      const key = scope();
      const first: DeliveredEvent[] = [];
      const second: DeliveredEvent[] = [];
      const subA = await backbone.subscribe('notifications', (e) => first.push(e));
      const subB = await backbone.subscribe('notifications', (e) => second.push(e));
      await backbone.publish(events('notifications', key, 1, 20));
      await waitFor(() => first.length >= 20 && second.length >= 20, 5000, 'both subscribers');
      await subA.close();
      await backbone.publish(events('notifications', key, 21, 5));
      await waitFor(() => second.length >= 25, 5000, 'the open subscriber');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(seqsOf(first, key)).to.deep.equal(range(1, 20));
      expect(seqsOf(second, key)).to.deep.equal(range(1, 25));
      await subB.close();
    });

    it('consumer group: at least once, a failed handler run comes back until it succeeds', async () => {
      const backbone = await open();
      const key = scope();
      const failedOnce = new Set<string>();
      const handled = new Set<number>();
      const consumer = track(
        await backbone.consume(
          { channel: 'notifications', group: 'g-retry', consumer: 'c1', blockMs: 100, claimIdleMs: 150, maxDeliveries: 5 },
          async (e) => {
            if (e.seq % 5 === 0 && !failedOnce.has(e.entryId)) {
              failedOnce.add(e.entryId);
              throw new Error('transient');
            }
            handled.add(e.seq);
          },
        ),
      );
      await backbone.publish(events('notifications', key, 1, 40));
      await waitFor(() => handled.size === 40, 8000, 'every event handled');
      await waitFor(async () => (await consumer.stats()).pending === 0, 5000, 'nothing pending');
      const stats = await consumer.stats();
      expect(stats).to.include({ pending: 0, lag: 0, acked: 40, failed: 8, deadLettered: 0 });
      expect(stats.reclaimed).to.be.at.least(8);
      expect(await backbone.deadLetters('notifications')).to.deep.equal([]);
    });

    it('consumer group: two members share the work with no duplicate', async () => {
      const backbone = await open();
      const key = scope();
      const seen: { consumer: string; seq: number }[] = [];
      const member = async (name: string): Promise<Consumer> =>
        track(
          await backbone.consume(
            { channel: 'messages', group: 'g-share', consumer: name, batchSize: 5, blockMs: 100, claimIdleMs: 10_000 },
            async (e) => {
              seen.push({ consumer: name, seq: e.seq });
              await new Promise((resolve) => setTimeout(resolve, 2));
            },
          ),
        );
      const [one, two] = [await member('one'), await member('two')];
      await backbone.publish(events('messages', key, 1, 100));
      await waitFor(() => seen.length >= 100, 10_000, '100 handled');
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(seen).to.have.length(100);
      expect(seen.map((s) => s.seq).sort((x, y) => x - y)).to.deep.equal(range(1, 100));
      expect(seen.filter((s) => s.consumer === 'one').length).to.be.greaterThan(0);
      expect(seen.filter((s) => s.consumer === 'two').length).to.be.greaterThan(0);
      const [statsOne, statsTwo] = [await one.stats(), await two.stats()];
      expect(statsOne.acked + statsTwo.acked).to.equal(100);
      expect(statsOne.pending).to.equal(0);
    });

    it('consumer group: with concurrency N, up to N scopes are handled side by side, each in order, each entry acked once', async () => {
      const backbone = await open();
      const scopes = [scope(), scope(), scope(), scope(), scope()];
      let inFlight = 0;
      let peak = 0;
      const handled = new Map<string, number[]>();
      const busy = new Set<string>();
      let overlapWithinScope = false;
      const consumer = track(
        await backbone.consume(
          { channel: 'messages', group: 'g-parallel', consumer: 'p', batchSize: 32, blockMs: 100, claimIdleMs: 10_000, concurrency: 4 },
          async (e) => {
            if (busy.has(e.scopeKey)) overlapWithinScope = true;
            busy.add(e.scopeKey);
            inFlight++;
            peak = Math.max(peak, inFlight);
            await new Promise((resolve) => setTimeout(resolve, 20));
            inFlight--;
            busy.delete(e.scopeKey);
            handled.set(e.scopeKey, [...(handled.get(e.scopeKey) ?? []), e.seq]);
          },
        ),
      );
      for (let seq = 1; seq <= 4; seq++) await backbone.publish(scopes.flatMap((key) => events('messages', key, seq, 1)));
      const total = () => [...handled.values()].reduce((n, list) => n + list.length, 0);
      await waitFor(() => total() >= 20, 10_000, '20 handled');
      expect(peak).to.be.at.most(4);
      expect(peak).to.be.greaterThan(1);
      expect(overlapWithinScope, 'two entries of one scope at once').to.equal(false);
      for (const key of scopes) expect(handled.get(key), key).to.deep.equal([1, 2, 3, 4]);
      await waitFor(async () => (await consumer.stats()).acked === 20, 5000, '20 acked');
      expect((await consumer.stats()).pending).to.equal(0);
    });

    it('consumer group: with lingerMs, a trickle is handled in order per scope, every entry acked once', async () => {
      const backbone = await open();
      const key = scope();
      const handled: number[] = [];
      const consumer = track(
        await backbone.consume({ channel: 'messages', group: 'g-linger', consumer: 'l', blockMs: 100, claimIdleMs: 10_000, lingerMs: 20 }, async (e) => {
          handled.push(e.seq);
        }),
      );
      for (let seq = 1; seq <= 20; seq++) {
        await backbone.publish(events('messages', key, seq, 1));
        if (seq % 3 === 0) await new Promise((resolve) => setTimeout(resolve, 7));
      }
      await waitFor(async () => (await consumer.stats()).acked === 20, 5000, '20 acked');
      expect(handled).to.deep.equal(range(1, 20));
      expect((await consumer.stats()).pending).to.equal(0);
    });

    it('consumer group: a member that dies without acking has its entries taken over after claimIdleMs', async () => {
      const backbone = await open();
      const key = scope();
      const takenByDead: string[] = [];
      const dead = await backbone.consume(
        { channel: 'messages', group: 'g-crash', consumer: 'dies', blockMs: 100, claimIdleMs: 200 },
        async (e) => {
          takenByDead.push(e.entryId);
          throw new Error('crashed before ack');
        },
      );
      await backbone.publish(events('messages', key, 1, 10));
      await waitFor(() => takenByDead.length >= 10, 5000, 'the dying member to take all');
      await dead.stop();
      expect((await dead.stats()).pending).to.equal(10);

      const handledBySurvivor: DeliveredEvent[] = [];
      const survivor = track(
        await backbone.consume(
          { channel: 'messages', group: 'g-crash', consumer: 'survives', blockMs: 100, claimIdleMs: 200 },
          async (e) => void handledBySurvivor.push(e),
        ),
      );
      await waitFor(() => handledBySurvivor.length >= 10, 5000, 'the survivor to reclaim');
      expect(handledBySurvivor.map((e) => e.entryId).sort()).to.deep.equal([...new Set(takenByDead)].sort());
      expect(handledBySurvivor.map((e) => e.seq)).to.deep.equal(range(1, 10));
      await waitFor(async () => (await survivor.stats()).pending === 0, 5000, 'nothing pending');
      expect((await survivor.stats()).reclaimed).to.equal(10);
      expect(await backbone.deadLetters('messages')).to.deep.equal([]);
    });

    it('consumer group: a poison entry is dead-lettered after maxDeliveries, acked, and listed', async () => {
      const backbone = await open();
      const key = scope();
      let poisonRuns = 0;
      const handled: number[] = [];
      const consumer = track(
        await backbone.consume(
          { channel: 'notifications', group: 'g-poison', consumer: 'c1', blockMs: 50, claimIdleMs: 100, maxDeliveries: 2 },
          async (e) => {
            if (e.seq === 2) {
              poisonRuns++;
              throw new Error('poison');
            }
            handled.push(e.seq);
          },
        ),
      );
      await backbone.publish(events('notifications', key, 1, 3));
      await waitFor(async () => (await backbone.deadLetters('notifications')).length === 1, 8000, 'a dead letter');
      const [letter] = await backbone.deadLetters('notifications');
      expect(letter).to.include({ channel: 'notifications', scopeKey: key, seq: 2, group: 'g-poison', consumer: 'c1', deliveries: 3 });
      expect(letter?.data).to.equal(JSON.stringify({ scopeKey: key, seq: 2 }));
      expect(letter?.deadLetteredAt).to.be.closeTo(Date.now(), 10_000);
      expect(poisonRuns).to.equal(2);
      expect(handled).to.deep.equal([1, 3]);
      await waitFor(async () => (await consumer.stats()).pending === 0, 5000, 'the poison entry acked');
      expect((await consumer.stats()).deadLettered).to.equal(1);
    });

    it('trims by retention alone when no group reads a channel', async () => {
      const backbone = await open({ retentionMs: 0 });
      await backbone.publish(events('notifications', scope(), 1, 300));
      await new Promise((resolve) => setTimeout(resolve, 5));
      const report = await backbone.trim('notifications');
      expect(report.channel).to.equal('notifications');
      expect(report.removed).to.be.at.least(200);
      expect(report.remaining).to.be.at.most(100);
    });

    it('trimming never removes what a group has not read or acknowledged, and bounds length once it has', async () => {
      const backbone = await open({ retentionMs: 0 });
      const key = scope();
      const idle = await backbone.consume({ channel: 'messages', group: 'g-trim', consumer: 'idle', blockMs: 50 }, async () => undefined);
      await idle.stop();
      await backbone.publish(events('messages', key, 1, 300));
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await backbone.trim('messages')).to.include({ removed: 0, remaining: 300 });
      expect(await idle.stats()).to.include({ pending: 0, lag: 300 });

      const failing = await backbone.consume(
        { channel: 'messages', group: 'g-trim', consumer: 'failing', blockMs: 50, claimIdleMs: 60_000 },
        async () => {
          throw new Error('not yet');
        },
      );
      await waitFor(async () => (await failing.stats()).pending === 300, 8000, '300 pending');
      await failing.stop();
      expect(await backbone.trim('messages')).to.include({ removed: 0, remaining: 300 });

      const handled = new Set<number>();
      const healthy = await backbone.consume(
        { channel: 'messages', group: 'g-trim', consumer: 'healthy', blockMs: 50, claimIdleMs: 50 },
        async (e) => void handled.add(e.seq),
      );
      await waitFor(async () => (await healthy.stats()).pending === 0 && handled.size === 300, 8000, 'all acked');
      await healthy.stop();
      const report = await backbone.trim('messages');
      expect(report.removed).to.be.at.least(200);
      expect(report.remaining).to.be.at.most(100);
    });

    it('answers ping while open', async () => {
      const backbone = await open();
      await backbone.ping();
    });
  });
}
