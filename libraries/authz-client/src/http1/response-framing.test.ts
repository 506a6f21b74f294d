import { expect } from 'chai';
import { bytesOf, eventually, failure, startRawHttpServer, writeInPieces, type RawHandler, type RawHttpServer } from '../../test/raw-http-server.ts';
import { createCoreTransport, type CoreTransport } from '../core-transport.ts';
import { Http1Client } from './http1-client.ts';

const CHUNKED_ANSWER = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\n{"a":\r\na\r\n"bcdefgh"}\r\n0\r\nX-Checksum: 1\r\n\r\n';

describe('Http1Client response framing (raw server answers)', () => {
  let server: RawHttpServer;
  let transport: CoreTransport;
  let answer: RawHandler;

  const get = (path = '/', maxResponseBytes = 1024) => transport.send(new URL(path, server.url), { method: 'GET', timeoutMs: 2000, maxResponseBytes });

  beforeEach(async () => {
    server = await startRawHttpServer((socket, request) => answer(socket, request));
    transport = createCoreTransport();
  });
  afterEach(async () => {
    await transport.close();
    await server.close();
  });

  describe('chunked answers', () => {
    it('reads chunks with extensions and trailers, then reuses the connection', async () => {
      answer = (socket) => void socket.write(CHUNKED_ANSWER);
      expect(await get()).to.deep.equal({ status: 200, text: '{"a":"bcdefgh"}' });
      expect(await get()).to.deep.equal({ status: 200, text: '{"a":"bcdefgh"}' });
      expect(server.connections()).to.equal(1);
    });

    it('reads a chunked answer split at awkward places, mid-CRLF included', async () => {
      const cuts = [10, 16, 44, 45, 46, 49, 60, 63, 67, 70, 75, 82, 85, 90, 100, 102];
      answer = (socket) => writeInPieces(socket, cuts.map((cut, i) => CHUNKED_ANSWER.slice(i === 0 ? 0 : cuts[i - 1], cut)).concat(CHUNKED_ANSWER.slice(cuts.at(-1))));
      expect(await get()).to.deep.equal({ status: 200, text: '{"a":"bcdefgh"}' });
      expect(await get()).to.deep.equal({ status: 200, text: '{"a":"bcdefgh"}' });
      expect(server.connections()).to.equal(1);
    });

    it('reads a chunked answer delivered byte by byte', async () => {
      answer = (socket) => writeInPieces(socket, bytesOf(CHUNKED_ANSWER), 1);
      expect(await get()).to.deep.equal({ status: 200, text: '{"a":"bcdefgh"}' });
    });

    it('refuses a malformed chunk size and destroys the socket', async () => {
      answer = (socket) => void socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n');
      expect((await failure(get())).message).to.match(/malformed chunk size "zz"/);
      await eventually(() => server.closedConnections() === 1);
    });

    it('refuses bytes where the CRLF after a chunk belongs', async () => {
      answer = (socket) => void socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhello\r\n0\r\n\r\n');
      expect((await failure(get())).message).to.match(/bytes after a chunk's data/);
    });

    it('refuses a chunked answer that grows past maxResponseBytes', async () => {
      const chunk = `100\r\n${'x'.repeat(256)}\r\n`;
      answer = (socket) => writeInPieces(socket, ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n', chunk, chunk, chunk, chunk, chunk, '0\r\n\r\n']);
      expect((await failure(get('/', 1000))).message).to.match(/over 1000 bytes/);
      await eventually(() => server.closedConnections() === 1);
    });
  });

  describe('Content-Length answers', () => {
    it('reads an answer delivered byte by byte', async () => {
      answer = (socket) => writeInPieces(socket, bytesOf('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"ok":true}'), 1);
      expect(await get()).to.deep.equal({ status: 200, text: '{"ok":true}' });
      expect(await get()).to.deep.equal({ status: 200, text: '{"ok":true}' });
      expect(server.connections()).to.equal(1);
    });

    it('decodes a UTF-8 body split inside a character', async () => {
      const body = Buffer.from('{"name":"Zoë ✓"}', 'utf8');
      answer = (socket) => writeInPieces(socket, [`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`, body.subarray(0, 11), body.subarray(11, 15), body.subarray(15)]);
      expect((await get()).text).to.equal('{"name":"Zoë ✓"}');
    });

    it('refuses an answer declaring more than maxResponseBytes before reading it', async () => {
      answer = (socket) => void socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n');
      expect((await failure(get('/', 1000))).message).to.match(/declares 2000 bytes, over the 1000 allowed/);
      await eventually(() => server.closedConnections() === 1);
    });

    it('refuses differing Content-Length values', async () => {
      answer = (socket) => void socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok');
      expect((await failure(get())).message).to.match(/malformed Content-Length/);
    });

    it('reads an answer but does not reuse a connection with bytes past it', async () => {
      answer = (socket) => void socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n');
      expect((await get()).text).to.equal('ok');
      await eventually(() => server.closedConnections() === 1);
      expect((await get()).text).to.equal('ok');
      expect(server.connections()).to.equal(2);
    });
  });

  describe('answers without a length', () => {
    it('reads the body until the server closes, and opens a new connection for the next call', async () => {
      answer = async (socket) => {
        await writeInPieces(socket, ['HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello', ' world']);
        socket.end();
      };
      expect(await get()).to.deep.equal({ status: 200, text: 'hello world' });
      expect(await get()).to.deep.equal({ status: 200, text: 'hello world' });
      expect(server.connections()).to.equal(2);
    });

    it('refuses a body read until close that grows past maxResponseBytes', async () => {
      answer = (socket) => writeInPieces(socket, ['HTTP/1.1 200 OK\r\n\r\n', 'x'.repeat(600), 'x'.repeat(600)]);
      expect((await failure(get('/', 1000))).message).to.match(/over 1000 bytes/);
    });

    it('skips 1xx interim answers', async () => {
      answer = (socket) =>
        writeInPieces(socket, ['HTTP/1.1 100 Continue\r\n\r\n', 'HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\n', 'Content-Length: 2\r\n\r\nok']);
      expect(await get()).to.deep.equal({ status: 200, text: 'ok' });
      expect(await get()).to.deep.equal({ status: 200, text: 'ok' });
      expect(server.connections()).to.equal(1);
    });

    it('reads 204 and 304 as bodiless whatever their headers say, and keeps the connection', async () => {
      answer = (socket, request) =>
        void socket.write(request.indexOnConnection === 0 ? 'HTTP/1.1 204 No Content\r\n\r\n' : 'HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n');
      expect(await get()).to.deep.equal({ status: 204, text: '' });
      expect(await get()).to.deep.equal({ status: 304, text: '' });
      expect(server.connections()).to.equal(1);
    });

    it('reads a HEAD answer as bodiless despite its Content-Length', async () => {
      const client = new Http1Client();
      answer = (socket) => void socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n');
      const head = () => client.send(new URL('/', server.url), { method: 'HEAD', timeoutMs: 2000, maxResponseBytes: 100 });
      expect(await head()).to.deep.equal({ status: 200, text: '' });
      expect(await head()).to.deep.equal({ status: 200, text: '' });
      expect(server.connections()).to.equal(1);
      await client.close();
    });
  });

  describe('malformed heads', () => {
    for (const [name, head, pattern] of [
      ['a status line without a code', 'HTTP/1.1 OK\r\nContent-Length: 0\r\n\r\n', /malformed status line/],
      ['another protocol', 'ICY 200 OK\r\n\r\n', /malformed status line/],
      ['a header without a colon', 'HTTP/1.1 200 OK\r\nContent-Length 0\r\n\r\n', /malformed header field/],
      ['a space before the colon', 'HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n', /malformed header field/],
      ['a bare LF inside a field', 'HTTP/1.1 200 OK\r\nX-A: 1\nContent-Length: 0\r\n\r\n', /malformed header field/],
      ['a folded header line', 'HTTP/1.1 200 OK\r\nX-A: 1\r\n 2\r\nContent-Length: 0\r\n\r\n', /malformed header field/],
      ['a 101 to a plain request', 'HTTP/1.1 101 Switching Protocols\r\n\r\n', /101/],
    ] as const) {
      it(`refuses ${name} and destroys the socket`, async () => {
        answer = (socket) => void socket.write(head);
        expect((await failure(get())).message).to.match(pattern);
        await eventually(() => server.closedConnections() === 1);
      });
    }

    it('refuses a head over 64 KiB', async () => {
      answer = (socket) => writeInPieces(socket, ['HTTP/1.1 200 OK\r\n', `X-Big: ${'a'.repeat(40_000)}\r\n`, `X-Big: ${'a'.repeat(40_000)}\r\n`, 'Content-Length: 0\r\n\r\n']);
      expect((await failure(get())).message).to.match(/head is over 65536 bytes/);
      await eventually(() => server.closedConnections() === 1);
    });

    it('refuses an oversized head that arrives whole', async () => {
      answer = (socket) => void socket.write(`HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(70_000)}\r\nContent-Length: 0\r\n\r\n`);
      expect((await failure(get())).message).to.match(/head is over 65536 bytes/);
    });
  });
});
