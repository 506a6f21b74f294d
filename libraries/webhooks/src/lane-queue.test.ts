import { expect } from 'chai';
import type { WebhookLaneKey } from '@chat/store';
import { InProcessLaneQueue, laneName } from './lane-queue.ts';

const lane = (n: number): WebhookLaneKey => ({ webhookId: 'w1', inboxKey: `inbox:r${n}:bot:b1` });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('InProcessLaneQueue', function () {
  it('runs a lane queued many times while every slot is busy once, when a slot frees', async function () {
    const queue = new InProcessLaneQueue(1, (err) => {
      throw err;
    });
    const runs: string[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    queue.start(async (key) => {
      runs.push(laneName(key));
      if (key.inboxKey === lane(0).inboxKey) await held;
      return { kind: 'settled' };
    });
    await queue.enqueue([lane(0)]);
    await sleep(10);
    // The one slot is held by lane 0; lanes 1 and 2 come due again and again meanwhile.
    for (let i = 0; i < 50; i++) {
      await queue.enqueue([lane(1), lane(2)]);
      await sleep(1);
    }
    release();
    await sleep(50);
    await queue.stop();
    expect(runs).to.deep.equal([lane(0), lane(1), lane(2)].map(laneName));
  });

  it('runs a lane queued while it runs once more after it, never two runs of a lane at once', async function () {
    const queue = new InProcessLaneQueue(4, (err) => {
      throw err;
    });
    let running = 0;
    let mostAtOnce = 0;
    let runs = 0;
    queue.start(async () => {
      runs += 1;
      mostAtOnce = Math.max(mostAtOnce, ++running);
      await sleep(20);
      running -= 1;
      return { kind: 'settled' };
    });
    await queue.enqueue([lane(0)]);
    await sleep(5);
    for (let i = 0; i < 10; i++) await queue.enqueue([lane(0)]);
    await sleep(100);
    await queue.stop();
    expect(mostAtOnce).to.equal(1);
    expect(runs).to.equal(2);
  });
});
