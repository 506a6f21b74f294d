import { expect } from 'chai';
import { SseParser, type SseEvent } from './sse-parser.ts';

/** Parses `chunks` in order and returns the dispatched events and comments. */
function parse(...chunks: string[]): { events: SseEvent[]; comments: string[]; retries: number[] } {
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const retries: number[] = [];
  const parser = new SseParser({ onEvent: (e) => events.push(e), onComment: (c) => comments.push(c), onRetry: (ms) => retries.push(ms) });
  for (const chunk of chunks) parser.feed(chunk);
  return { events, comments, retries };
}

/** Every way of cutting `text` into two chunks, and into single characters. */
function splits(text: string): string[][] {
  const out: string[][] = [[text], [...text]];
  for (let i = 1; i < text.length; i += 1) out.push([text.slice(0, i), text.slice(i)]);
  return out;
}

describe('SseParser', () => {
  it('dispatches an event with type, data and id', () => {
    const { events } = parse('event: message\nid: c1\ndata: {"a":1}\n\n');
    expect(events).to.deep.equal([{ event: 'message', data: '{"a":1}', lastEventId: 'c1', hasId: true }]);
  });

  it('treats LF, CR and CRLF line ends alike, however the text is chunked', () => {
    for (const eol of ['\n', '\r', '\r\n']) {
      const text = ['event: e', 'id: 7', 'data: x', '', 'data: y', '', ''].join(eol);
      for (const chunks of splits(text)) {
        const { events } = parse(...chunks);
        expect(events.map((e) => [e.event, e.data, e.lastEventId, e.hasId]), JSON.stringify(chunks)).to.deep.equal([
          ['e', 'x', '7', true],
          ['message', 'y', '7', false],
        ]);
      }
    }
  });

  it('a CR at the end of a chunk followed by LF in the next is one line end, not two', () => {
    const { events } = parse('data: a\r', '\ndata: b\r\n\r\n');
    expect(events.map((e) => e.data)).to.deep.equal(['a\nb']);
  });

  it('joins data lines with LF and drops only the final LF', () => {
    const { events } = parse('data: one\ndata:two\ndata\ndata:  three \n\n');
    expect(events[0]?.data).to.equal('one\ntwo\n\n three ');
  });

  it('removes exactly one space after the colon', () => {
    const { events } = parse('event:  spaced\ndata:x\n\n');
    expect(events[0]?.event).to.equal(' spaced');
  });

  it('ignores an id containing NUL and keeps the previous one', () => {
    const { events } = parse('id: good\ndata: 1\n\nid: ba\0d\ndata: 2\n\n');
    expect(events.map((e) => [e.lastEventId, e.hasId])).to.deep.equal([
      ['good', true],
      ['good', false],
    ]);
  });

  it('an empty id resets the last event id', () => {
    const { events } = parse('id: a\ndata: 1\n\nid\ndata: 2\n\n');
    expect(events.map((e) => e.lastEventId)).to.deep.equal(['a', '']);
  });

  it('reports comments and skips them', () => {
    const { events, comments } = parse(': keep-alive\n:\ndata: x\n: inside\n\n');
    expect(comments).to.deep.equal([' keep-alive', '', ' inside']);
    expect(events.map((e) => e.data)).to.deep.equal(['x']);
  });

  it('does not dispatch an event without data, and forgets its type', () => {
    const { events } = parse('event: heartbeat\n\ndata: x\n\n');
    expect(events).to.deep.equal([{ event: 'message', data: 'x', lastEventId: '', hasId: false }]);
  });

  it('an id in a block without data still sets the last event id', () => {
    const { events } = parse('id: only\n\ndata: x\n\n');
    expect(events[0]).to.include({ lastEventId: 'only', hasId: false });
  });

  it('discards a final event that has no blank line', () => {
    const { events } = parse('data: complete\n\ndata: cut');
    expect(events.map((e) => e.data)).to.deep.equal(['complete']);
  });

  it('ignores unknown fields and a line without a colon names a field with an empty value', () => {
    const { events } = parse('foo: bar\nevent\ndata: x\n\n');
    expect(events[0]?.event).to.equal('message');
  });

  it('accepts only ASCII-digit retry values', () => {
    expect(parse('retry: 1500\nretry: 15x\nretry: -1\n\n').retries).to.deep.equal([1500]);
  });

  it('strips one leading byte order mark', () => {
    const { events } = parse('\ufeffdata: x\n\n');
    expect(events[0]?.data).to.equal('x');
    expect(parse('\ufeff', '\ufeffdata: y\n\n').events).to.deep.equal([]);
  });

  it('keeps multi-byte text intact when the decoder is fed split bytes', () => {
    const bytes = new TextEncoder().encode('data: ünïcödé 🚀\n\n');
    const decoder = new TextDecoder();
    const events: SseEvent[] = [];
    const parser = new SseParser({ onEvent: (e) => events.push(e) });
    for (const byte of bytes) parser.feed(decoder.decode(new Uint8Array([byte]), { stream: true }));
    expect(events[0]?.data).to.equal('ünïcödé 🚀');
  });
});
