import { expect } from 'chai';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { controlFrame, durableFrame, singleLineJson } from './sse-frame.ts';

function parse(text: string): EventSourceMessage[] {
  const events: EventSourceMessage[] = [];
  createParser({ onEvent: (e) => events.push(e) }).feed(text);
  return events;
}

describe('sse frames', () => {
  it('keeps a JSON text with raw line breaks and separators on one data line', () => {
    const raw = '{\n"a":\r\n"x\u2028y",\r"b": 1}';
    const line = singleLineJson(raw);
    expect(line).not.to.match(/[\r\n\0\u2028\u2029]/);
    expect(JSON.parse(line)).to.deep.equal(JSON.parse(raw));
  });

  it('frames a durable event that an independent parser reads back exactly', () => {
    const data = JSON.stringify({ body: 'a\r\nb\0c\u2029\n\nevent: forged\ndata: x' });
    expect(parse(durableFrame('abc_-1', 'message', data))).to.deep.equal([{ id: 'abc_-1', event: 'message', data: singleLineJson(data) }]);
    expect(JSON.parse(parse(durableFrame('i', 'message', data))[0]!.data)).to.deep.equal(JSON.parse(data));
  });

  it('refuses ids and event names that could break the framing', () => {
    expect(() => durableFrame('a\nb', 'message', '{}')).to.throw(TypeError);
    expect(() => durableFrame('a', 'message\r', '{}')).to.throw(TypeError);
  });

  it('frames control events without an id', () => {
    expect(parse(controlFrame('handoff', { reason: 'stream_rotation' }))).to.deep.equal([{ id: undefined, event: 'handoff', data: '{"reason":"stream_rotation"}' }]);
  });
});
