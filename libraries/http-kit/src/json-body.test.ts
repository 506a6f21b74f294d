import { once } from 'node:events';
import { createServer, request, type ClientRequest, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { AppError } from '@chat/contracts';
import { readJsonBody } from './json-body.ts';

type Outcome = { body: unknown } | { error: string };

describe('readJsonBody', () => {
  let port: number;
  let close: () => Promise<void>;
  before(async () => {
    const server = createServer((req, res) => {
      const done = (outcome: Outcome) => res.end(JSON.stringify(outcome));
      readJsonBody(req, 1024).then(
        (body) => done({ body }),
        (err: unknown) => done({ error: err instanceof AppError ? `${err.code}: ${err.message}` : `not an AppError: ${String(err)}` }),
      );
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
    close = () => new Promise<void>((r) => server.close(() => r()));
  });
  after(() => close());

  /** POSTs with `headers`, `write` sending the body, and answers what the server read. */
  const post = (headers: OutgoingHttpHeaders, write: (req: ClientRequest) => void) =>
    new Promise<Outcome>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/', method: 'POST', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString()) as Outcome));
      });
      req.on('error', reject);
      write(req);
    });
  /** `body` as JSON with its length, unless `headers` say otherwise. */
  const send = (body: Buffer, headers: OutgoingHttpHeaders = {}) =>
    post({ 'content-type': 'application/json', 'content-length': body.length, ...headers }, (req) => req.end(body));

  // What body-parser's strict JSON parser answers for each, which the API answered through express.
  const bodies: Array<[string, Buffer, Outcome | RegExp]> = [
    ['an object', Buffer.from('{"bodyMarkdown":"hi"}'), { body: { bodyMarkdown: 'hi' } }],
    ['an array', Buffer.from('[1,2]'), { body: [1, 2] }],
    ['an empty body', Buffer.alloc(0), { body: {} }],
    ['whitespace only', Buffer.from('  \n'), { body: {} }],
    ['a BOM before an object', Buffer.from('\uFEFF{"a":1}'), { body: { a: 1 } }],
    ['a BOM alone', Buffer.from('\uFEFF'), { body: {} }],
    ['a string at the top level', Buffer.from('"text"'), /^REQUEST_INVALID: .*object or array/],
    ['a number at the top level', Buffer.from('12'), /^REQUEST_INVALID: .*object or array/],
    ['null at the top level', Buffer.from('null'), /^REQUEST_INVALID: .*object or array/],
    ['broken JSON', Buffer.from('{"a":'), /^REQUEST_INVALID: .*not valid JSON/],
    ['leading and trailing whitespace', Buffer.from(' \t{"a":1}\r\n'), { body: { a: 1 } }],
    ['invalid UTF-8 inside a string', Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]), { body: { a: '\uFFFD(' } }],
    ['NUL and U+2028 escapes', Buffer.from('{"a":"\\u0000\\u2028"}'), { body: { a: '\u0000\u2028' } }],
    ['a body over the limit', Buffer.from(`{"a":"${'x'.repeat(1100)}"}`), /^REQUEST_INVALID: .*too large/],
  ];
  for (const [name, body, expected] of bodies) {
    it(`answers ${name}`, async () => {
      const outcome = await send(body);
      if (expected instanceof RegExp) expect((outcome as { error?: string }).error).to.match(expected);
      else expect(outcome).to.deep.equal(expected);
    });
  }

  it('takes application/json with no charset or UTF-8, in any case', async () => {
    for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON;charset="UTF-8"']) {
      expect(await send(Buffer.from('{"a":1}'), { 'content-type': type }), type).to.deep.equal({ body: { a: 1 } });
    }
  });

  it('refuses another type or charset, and a missing type, with REQUEST_INVALID', async () => {
    for (const type of ['text/plain', 'application/vnd.api+json', 'application/json; charset=latin1', 'not a type']) {
      expect((await send(Buffer.from('{"a":1}'), { 'content-type': type })) as { error: string }, type).to.have.property('error').that.matches(/^REQUEST_INVALID/);
    }
    const untyped = await post({ 'content-length': 2 }, (req) => req.end('{}'));
    expect(untyped).to.have.property('error').that.matches(/^REQUEST_INVALID: .*application\/json/);
  });

  it('reads a gzip-coded body, and measures the limit on the decoded bytes', async () => {
    expect(await send(gzipSync('{"a":"zipped"}'), { 'content-encoding': 'gzip' })).to.deep.equal({ body: { a: 'zipped' } });
    const bomb = gzipSync(`{"a":"${'x'.repeat(100_000)}"}`);
    expect(bomb.length).to.be.below(1024);
    expect(await send(bomb, { 'content-encoding': 'gzip' })).to.have.property('error').that.matches(/too large/);
    expect(await send(Buffer.from('{"a":1}'), { 'content-encoding': 'gzip' })).to.have.property('error').that.matches(/Content-Encoding/);
    expect(await send(Buffer.from('{"a":1}'), { 'content-encoding': 'x-junk' })).to.have.property('error').that.matches(/not supported/);
  });

  it('reads a chunked body without a declared length', async () => {
    const outcome = await post({ 'content-type': 'application/json' }, (req) => {
      req.write('{"a":');
      req.end('2}');
    });
    expect(outcome).to.deep.equal({ body: { a: 2 } });
  });
});
