import { expect } from 'chai';
import { acceptsEventStream, requireEventStream } from './event-stream.ts';

/** Accept headers and whether express's `req.accepts('text/event-stream')` admits each. */
const DECISIONS: Array<[string | undefined, boolean]> = [
  [undefined, true],
  ['', true],
  ['text/event-stream', true],
  ['TEXT/Event-Stream', true],
  ['*/*', true],
  ['text/*', true],
  ['application/json', false],
  ['text/html, application/xhtml+xml, application/xml;q=0.9, */*;q=0.8', true],
  ['application/json, text/plain', false],
  ['text/event-stream;q=0', false],
  ['text/event-stream;q=0, */*', false],
  ['*/*;q=0, text/event-stream', true],
  ['text/*;q=0, */*', false],
  ['text/*, text/event-stream;q=0', false],
  ['*/*;q=0', false],
  ['text/event-stream;q=0.001', true],
  ['text/event-stream; charset=utf-8', false],
  ['text/event-stream; charset=*', true],
  ['text/event-stream;q=', true],
  ['application/json;q=1, text/*;q=0.5', true],
  ['image/png, */*;q=0.1', true],
];

const request = (accept: string | undefined) => ({ headers: accept === undefined ? {} : { accept } });

describe('acceptsEventStream', () => {
  for (const [header, admitted] of DECISIONS) {
    it(`${admitted ? 'admits' : 'refuses'} ${JSON.stringify(header)}, as express's req.accepts does`, () => {
      expect(acceptsEventStream(request(header))).to.equal(admitted);
    });
  }

  it('requireEventStream throws REQUEST_INVALID for a refusing header only', () => {
    expect(() => requireEventStream(request('text/*'))).not.to.throw();
    expect(() => requireEventStream(request('application/json'))).to.throw().with.property('code', 'REQUEST_INVALID');
  });
});
