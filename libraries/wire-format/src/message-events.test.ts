import { expect } from 'chai';
import { committedMessageEvents, committedMessageEventsFromPayload, parseMentionEventData } from './message-events.ts';

describe('committed message events', () => {
  const payload = (mentions?: unknown[]) => JSON.stringify({ messageId: 'M1', roomId: 'R1', bodyMarkdown: 'hi', ...(mentions ? { mentions } : {}) });

  it('makes a messages event for every message and a mentions event only when it mentions anyone', () => {
    expect(committedMessageEvents({ roomId: 'R1', seq: 4, messageId: 'M1', mentionsSomeone: false }, 'P')).to.deep.equal([
      { channel: 'messages', scopeKey: 'R1', seq: 4, data: 'P' },
    ]);
    expect(committedMessageEvents({ roomId: 'R1', seq: 4, messageId: 'M1', mentionsSomeone: true }, 'P')).to.deep.equal([
      { channel: 'messages', scopeKey: 'R1', seq: 4, data: 'P' },
      { channel: 'mentions', scopeKey: 'R1', seq: 4, data: '{"messageId":"M1"}' },
    ]);
  });

  it("carries the publish span's traceparent beside the data of both events, and untraced events have none", () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(committedMessageEvents({ roomId: 'R1', seq: 4, messageId: 'M1', mentionsSomeone: true }, 'P', traceparent)).to.deep.equal([
      { channel: 'messages', scopeKey: 'R1', seq: 4, data: 'P', traceparent },
      { channel: 'mentions', scopeKey: 'R1', seq: 4, data: '{"messageId":"M1"}', traceparent },
    ]);
    expect(committedMessageEventsFromPayload('R1', 2, payload(), traceparent)[0]).to.include({ data: payload(), traceparent });
    const [untraced] = committedMessageEvents({ roomId: 'R1', seq: 4, messageId: 'M1', mentionsSomeone: false }, 'P');
    expect(untraced).to.not.have.property('traceparent');
  });

  it('reads whether a stored payload mentions anyone, as the relay needs', () => {
    expect(committedMessageEventsFromPayload('R1', 2, payload()).map((e) => e.channel)).to.deep.equal(['messages']);
    expect(committedMessageEventsFromPayload('R1', 2, payload([])).map((e) => e.channel)).to.deep.equal(['messages']);
    const both = committedMessageEventsFromPayload('R1', 2, payload([{ principalKind: 'human' }]));
    expect(both.map((e) => e.channel)).to.deep.equal(['messages', 'mentions']);
    expect(parseMentionEventData(both[1]!.data)).to.deep.equal({ messageId: 'M1' });
  });

  it('refuses payloads and mention data without a message ID', () => {
    expect(() => committedMessageEventsFromPayload('R1', 2, '{"roomId":"R1"}')).to.throw(/no messageId/);
    expect(() => committedMessageEventsFromPayload('R1', 2, 'not json')).to.throw();
    expect(() => parseMentionEventData('{"messageId":7}')).to.throw(/without a messageId/);
  });
});
