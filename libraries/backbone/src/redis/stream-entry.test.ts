import { expect } from 'chai';
import { eventFields, toDeliveredEvent } from './stream-entry.ts';

describe('stream entries', () => {
  it('turns the fields it writes back into the event', () => {
    expect(toDeliveredEvent('messages', '1-0', eventFields('room-1', 7, '{"a":1}'))).to.deep.equal({
      channel: 'messages',
      scopeKey: 'room-1',
      seq: 7,
      data: '{"a":1}',
      entryId: '1-0',
    });
  });

  it('skips malformed entries rather than hand out a made-up event', () => {
    for (const fields of [
      ['scopeKey', 'room-1', 'seq', '7'],
      ['scopeKey', 'room-1', 'seq', 'x', 'data', '{}'],
      ['seq', '7', 'data', '{}'],
      // What a relay without a payload (an older release meeting a payload-free outbox row) writes.
      ['scopeKey', 'room-1', 'seq', '7', 'data', ''],
      'not a list',
    ]) {
      expect(toDeliveredEvent('messages', '1-0', fields), JSON.stringify(fields)).to.equal(null);
    }
  });
});
