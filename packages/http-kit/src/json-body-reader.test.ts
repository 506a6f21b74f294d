import { once } from 'node:events';
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import express from 'express';
import { isPlainJsonRequest, readJsonBody } from './json-body-reader.ts';

type Outcome = { body: unknown } | { error: string };

/** One server that reads each request twice over: with body-parser (as the express routes do) or readJsonBody. */
async function startReaders() {
  const parse = express.json({ limit: 1024, strict: true, type: () => true });
  const server = createServer((req, res) => {
    const done = (outcome: Outcome) => res.end(JSON.stringify(outcome));
    if (req.url === '/body-parser') {
      const r = req as IncomingMessage & { body?: unknown };
      parse(r as never, res as never, (err?: unknown) => done(err ? { error: String((err as { type?: string }).type) } : { body: r.body }));
    } else {
      readJsonBody(req).then((body) => done({ body }), (err: { type?: string }) => done({ error: String(err.type) }));
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const send = (path: string, body: Buffer) =>
    new Promise<Outcome>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString()) as Outcome));
      });
      req.on('error', reject);
      req.end(body);
    });
  return { send, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('readJsonBody', () => {
  let readers: Awaited<ReturnType<typeof startReaders>>;
  before(async () => (readers = await startReaders()));
  after(() => readers.close());

  const bodies: Array<[string, Buffer]> = [
    ['an object', Buffer.from('{"bodyMarkdown":"hi"}')],
    ['an array', Buffer.from('[1,2]')],
    ['an empty body', Buffer.alloc(0)],
    ['whitespace only', Buffer.from('  \n')],
    ['a BOM before an object', Buffer.from('\uFEFF{"a":1}')],
    ['a BOM alone', Buffer.from('\uFEFF')],
    ['a string at the top level', Buffer.from('"text"')],
    ['a number at the top level', Buffer.from('12')],
    ['null at the top level', Buffer.from('null')],
    ['broken JSON', Buffer.from('{"a":')],
    ['leading and trailing whitespace', Buffer.from(' \t{"a":1}\r\n')],
    ['invalid UTF-8 inside a string', Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')])],
    ['NUL and U+2028 escapes', Buffer.from('{"a":"\\u0000\\u2028"}')],
  ];
  for (const [name, body] of bodies) {
    it(`answers ${name} as body-parser's strict JSON parser does`, async () => {
      const [expected, actual] = await Promise.all([readers.send('/body-parser', body), readers.send('/reader', body)]);
      expect(actual).to.deep.equal(expected);
    });
  }
});

describe('isPlainJsonRequest', () => {
  const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
  it('takes application/json with a declared length within the limit, UTF-8 or no charset', () => {
    for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON;charset="UTF-8"']) {
      expect(isPlainJsonRequest(req({ 'content-type': type, 'content-length': '10' }), 100), type).to.equal(true);
    }
    expect(isPlainJsonRequest(req({ 'content-type': 'application/json', 'content-length': '10', 'content-encoding': 'identity' }), 100)).to.equal(true);
  });
  it('leaves everything else to express', () => {
    const cases: Array<Record<string, string>> = [
      { 'content-type': 'application/json' },
      { 'content-type': 'application/json', 'content-length': '101' },
      { 'content-type': 'application/json', 'content-length': '10', 'transfer-encoding': 'chunked' },
      { 'content-type': 'application/json', 'content-length': '10', 'content-encoding': 'gzip' },
      { 'content-type': 'application/json; charset=latin1', 'content-length': '10' },
      { 'content-type': 'text/plain', 'content-length': '10' },
      { 'content-type': 'application/vnd.api+json', 'content-length': '10' },
      { 'content-length': '10' },
      { 'content-type': 'application/json', 'content-length': '1e2' },
    ];
    for (const headers of cases) expect(isPlainJsonRequest(req(headers), 100), JSON.stringify(headers)).to.equal(false);
  });
});
