import { expect } from 'chai';
import { readRequestHead } from './request-head.ts';

const head = (text: string) => readRequestHead(Buffer.from(text, 'latin1'), 16 * 1024);

describe('readRequestHead (the stream front)', () => {
  it('reads a plain HTTP/1.1 GET: target, headers by lower-case name, value whitespace trimmed, length', () => {
    const text = 'GET /v1/repositories/R/room/events?cursor=x HTTP/1.1\r\nHost: gw\r\nAuthorization:  Bearer t \r\nLast-Event-ID: c1\r\nConnection: keep-alive\r\n\r\n';
    const reading = head(text);
    expect(reading.kind).to.equal('plain-get');
    if (reading.kind !== 'plain-get') return;
    expect(reading.head.target).to.equal('/v1/repositories/R/room/events?cursor=x');
    expect({ ...reading.head.headers }).to.deep.equal({ host: 'gw', authorization: 'Bearer t', 'last-event-id': 'c1', connection: 'keep-alive' });
    expect(reading.head.length).to.equal(Buffer.byteLength(text, 'latin1'));
  });

  it('waits for the blank line, and gives up on it past the size limit', () => {
    expect(head('GET / HTTP/1.1\r\nHost: gw\r\n').kind).to.equal('incomplete');
    expect(readRequestHead(Buffer.from(`GET / HTTP/1.1\r\nX: ${'a'.repeat(100)}`), 64).kind).to.equal('other');
    expect(readRequestHead(Buffer.from(`GET / HTTP/1.1\r\nHost: gw\r\nX: ${'a'.repeat(100)}\r\n\r\n`), 64).kind).to.equal('other');
  });

  it('leaves to Node every head it would have to settle', () => {
    const others = [
      'POST /v1/x HTTP/1.1\r\nHost: gw\r\n\r\n',
      'HEAD /v1/x HTTP/1.1\r\nHost: gw\r\n\r\n',
      'get /v1/x HTTP/1.1\r\nHost: gw\r\n\r\n',
      'GET /v1/x HTTP/1.0\r\nHost: gw\r\n\r\n',
      'GET http://gw/v1/x HTTP/1.1\r\nHost: gw\r\n\r\n',
      'GET /v1/x HTTP/1.1\r\n\r\n', // no Host
      'GET /v1/x HTTP/1.1\r\nHost: gw\r\nHost: other\r\n\r\n', // a repeated header
      'GET /v1/x HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer a\r\nauthorization: Bearer b\r\n\r\n',
      'GET /v1/x HTTP/1.1\r\nHost: gw\r\nX-A: 1\r\n  folded\r\n\r\n', // obs-fold
      'GET /v1/x HTTP/1.1\r\nHost: gw\r\nContent-Length: 5\r\n\r\n',
      'GET /v1/x HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n\r\n',
      'GET /v1/x HTTP/1.1\r\nHost: gw\r\nExpect: 100-continue\r\n\r\n',
      'GET /v1/x HTTP/1.1\r\nHost: gw\r\nUpgrade: websocket\r\n\r\n',
      'GET /v1/x HTTP/1.1\r\nHost: gw\r\nBad Name: 1\r\n\r\n',
      'GET /v1/x HTTP/1.1\r\nHost: gw\r\n: empty name\r\n\r\n',
      'GET /v1/x HTTP/1.1\r\nHost: gw\r\nX: a\x01b\r\n\r\n',
      'GET /v1/x HTTP/1.1\r\nHost: gw\r\nX\r\n\r\n',
      'GET /v1/x y HTTP/1.1\r\nHost: gw\r\n\r\n',
      'GET  /v1/x HTTP/1.1\r\nHost: gw\r\n\r\n',
      'GET /v1/\x7fx HTTP/1.1\r\nHost: gw\r\n\r\n',
    ];
    for (const text of others) expect(head(text).kind, JSON.stringify(text)).to.equal('other');
  });
});
