import { expect } from 'chai';
import type { MessageResponse } from '@chat/contracts';
import { checkDeliveries } from './sse-delivery-check.ts';
import type { ReceivedMessage } from './sse-resuming-client.ts';

const history = ['m1', 'm2', 'm3', 'm4'].map((messageId, i) => ({ messageId, bodyMarkdown: `body ${i}` }) as unknown as MessageResponse);
const event = (i: number, connection: number, data: object = history[i]!): ReceivedMessage => ({ id: `c${i}`, data: JSON.stringify(data), connection });
const counts = (received: ReceivedMessage[]) => {
  const { lost, duplicated, replayed, unexpected, reordered, badIds } = checkDeliveries(history, received);
  return { lost, duplicated, replayed, unexpected, reordered, badIds };
};
const clean = { lost: 0, duplicated: 0, replayed: 0, unexpected: 0, reordered: 0, badIds: 0 };

describe('harness self-test: the delivery checker can fail', () => {
  it('a complete, ordered delivery is clean; the last event repeated first on the next connection is the one allowed replay', () => {
    expect(counts([0, 1, 2, 3].map((i) => event(i, 1)))).to.deep.equal(clean);
    expect(counts([event(0, 1), event(1, 1), event(1, 2), event(2, 2), event(3, 2)])).to.deep.equal({ ...clean, replayed: 1 });
  });

  it('counts lost, duplicated, unexpected, reordered and inconsistent ids', () => {
    expect(counts([event(0, 1), event(1, 1), event(3, 1)])).to.deep.equal({ ...clean, lost: 1 });
    expect(counts([event(0, 1), event(1, 1), event(0, 1), event(2, 1), event(3, 1)])).to.deep.equal({ ...clean, duplicated: 1 });
    // A repeat on the same connection, or of an older event after a reconnect, is no allowed replay.
    expect(counts([event(0, 1), event(1, 1), event(0, 2), event(2, 2), event(3, 2)])).to.deep.equal({ ...clean, duplicated: 1 });
    expect(counts([...[0, 1, 2, 3].map((i) => event(i, 1)), event(0, 1, { messageId: 'm9' })])).to.deep.equal({ ...clean, unexpected: 1 });
    expect(counts([event(0, 1), event(1, 1, { ...history[1]!, bodyMarkdown: 'changed' }), event(2, 1), event(3, 1)])).to.deep.equal({ ...clean, unexpected: 1, lost: 1 });
    expect(counts([event(0, 1), event(2, 1), event(1, 1), event(3, 1)])).to.deep.equal({ ...clean, reordered: 1 });
    expect(counts([event(0, 1), { ...event(1, 1), id: '' }, event(2, 1), event(3, 1)])).to.deep.equal({ ...clean, badIds: 1 });
  });
});
