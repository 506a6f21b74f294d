import { expect } from 'chai';
import { createRequire } from 'node:module';
import { acceptsEventStream, requireEventStream } from './event-stream.ts';

// The reference: the `accepts` package behind express's `req.accepts`, which the express routes used
// before both paths shared `acceptsEventStream`. It is express's own dependency, so it is loaded from there.
const fromExpress = createRequire(createRequire(import.meta.url).resolve('express'));
const accepts = fromExpress('accepts') as (req: { headers: Record<string, string | undefined> }) => { types(type: string): string | false };
const expressAccepts = (header: string | undefined) => accepts({ headers: { accept: header } }).types('text/event-stream') !== false;

const HEADERS = [
  undefined,
  '',
  'text/event-stream',
  'TEXT/Event-Stream',
  '*/*',
  'text/*',
  'application/json',
  'text/html, application/xhtml+xml, application/xml;q=0.9, */*;q=0.8',
  'application/json, text/plain',
  'text/event-stream;q=0',
  'text/event-stream;q=0, */*',
  '*/*;q=0, text/event-stream',
  'text/*;q=0, */*',
  'text/*, text/event-stream;q=0',
  '*/*;q=0',
  'text/event-stream;q=0.001',
  'text/event-stream; charset=utf-8',
  'text/event-stream; charset=*',
  'text/event-stream;q=',
  'application/json;q=1, text/*;q=0.5',
  'image/png, */*;q=0.1',
];

describe('acceptsEventStream', () => {
  for (const header of HEADERS) {
    it(`decides ${JSON.stringify(header)} as express's req.accepts does`, () => {
      expect(acceptsEventStream(header)).to.equal(expressAccepts(header));
    });
  }

  it('admits a missing header and the stream type, and refuses what excludes it', () => {
    expect(acceptsEventStream(undefined)).to.equal(true);
    expect(acceptsEventStream('text/event-stream')).to.equal(true);
    expect(acceptsEventStream('application/json')).to.equal(false);
    expect(acceptsEventStream('text/event-stream;q=0, */*')).to.equal(false);
  });

  it('requireEventStream throws REQUEST_INVALID for a refusing header only', () => {
    expect(() => requireEventStream('text/*')).not.to.throw();
    expect(() => requireEventStream('application/json')).to.throw().with.property('code', 'REQUEST_INVALID');
  });
});
