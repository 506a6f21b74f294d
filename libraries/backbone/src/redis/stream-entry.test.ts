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

  it("carries a traceparent when the event has one, and reads an entry without it (an untraced or older publisher's) as before", () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(eventFields('room-1', 7, '{}')).to.deep.equal(['scopeKey', 'room-1', 'seq', '7', 'data', '{}']);
    expect(toDeliveredEvent('messages', '1-0', eventFields('room-1', 7, '{}', traceparent))).to.deep.equal({
      channel: 'messages',
      scopeKey: 'room-1',
      seq: 7,
      data: '{}',
      traceparent,
      entryId: '1-0',
    });
    // A traceparent field that is not a string is ignored, never a reason to drop the event.
    expect(toDeliveredEvent('messages', '1-0', ['scopeKey', 'room-1', 'seq', '7', 'data', '{}', 'traceparent', 5])).to.not.have.property('traceparent');
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
