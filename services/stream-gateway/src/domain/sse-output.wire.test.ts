import { expect } from 'chai';
import { connect } from 'node:net';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { GatewayHarness, roomEventsPath, TARGETS } from '../../test/gateway-harness.ts';

/** Reads a whole response off a raw socket: the head, and the body as the chunks on the wire. */
async function rawStream(url: string, path: string, token: string, onOpen: () => Promise<void>) {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${token}\r\n\r\n`);
  const parts: Buffer[] = [];
  let opened = false;
  await new Promise<void>((resolve, reject) => {
    socket.on('data', (d) => {
      parts.push(d);
      // The response is over at its last chunk; the connection itself stays open for keep-alive.
      if (opened && Buffer.concat(parts).subarray(-7).toString('latin1') === '\r\n0\r\n\r\n') {
        socket.destroy();
        resolve();
      }
      if (!opened && Buffer.concat(parts).includes('\r\n\r\n')) {
        opened = true;
        onOpen().catch(reject);
      }
    });
    socket.on('end', resolve);
    socket.on('error', reject);
  });
  const raw = Buffer.concat(parts);
  const headEnd = raw.indexOf('\r\n\r\n');
  return { head: raw.subarray(0, headEnd).toString('latin1'), body: raw.subarray(headEnd + 4) };
}

/** Strict chunked-encoding decoder: every chunk `<hex>\r\n<bytes>\r\n`, then `0\r\n\r\n` and nothing after. */
function decodeChunked(body: Buffer): { chunks: Buffer[]; terminated: boolean } {
  const chunks: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = body.indexOf('\r\n', at);
    if (lineEnd === -1) throw new Error(`no chunk-size line at byte ${at}`);
    const sizeText = body.subarray(at, lineEnd).toString('latin1');
    if (!/^[0-9a-f]+$/.test(sizeText)) throw new Error(`bad chunk-size line ${JSON.stringify(sizeText)} at byte ${at}`);
    const size = parseInt(sizeText, 16);
    at = lineEnd + 2;
    if (size === 0) {
      if (body.subarray(at).toString('latin1') !== '\r\n') throw new Error('bytes after the last chunk');
      return { chunks, terminated: true };
    }
    chunks.push(body.subarray(at, at + size));
    if (body.subarray(at + size, at + size + 2).toString('latin1') !== '\r\n') throw new Error(`chunk at byte ${at} not closed by CRLF`);
    at += size + 2;
  }
}

for (const target of TARGETS) {
  describe(`stream bytes on the wire (${target})`, function () {
    this.timeout(30_000);
    const h = new GatewayHarness({ target, repositories: 4, engine: { heartbeatMs: 200, maxStreamAgeMs: 1500, tickMs: 50 } });
    before(() => h.start());
    after(() => h.stop());

    it('is valid chunked encoding, one SSE frame per chunk, live events, heartbeats and the handoff in order, then the last chunk', async () => {
      const repo = h.repository();
      const scope = { repositoryId: repo.id, branchId: null };
      const replayed = await h.append(scope, 'before the stream ü');
      const live: string[] = [];
      const { head, body } = await rawStream(h.url, roomEventsPath(repo.id), await h.token(), async () => {
        for (let i = 0; i < 5; i++) live.push(h.cursorOf(await h.append(scope, `live ${i} — ✓`)));
      });
      expect(head).to.match(/^HTTP\/1\.1 200 OK\r\n/);
      expect(head.toLowerCase()).to.contain('transfer-encoding: chunked');
      const { chunks, terminated } = decodeChunked(body);
      expect(terminated).to.equal(true);
      const events: EventSourceMessage[] = [];
      for (const chunk of chunks) {
        const inChunk: EventSourceMessage[] = [];
        const parser = createParser({ onEvent: (e) => inChunk.push(e) });
        parser.feed(chunk.toString('utf8'));
        expect(inChunk, 'one whole frame per chunk').to.have.length(1);
        events.push(...inChunk);
      }
      const messages = events.filter((e) => e.event === 'message');
      expect(messages.map((e) => e.id)).to.deep.equal([h.cursorOf(replayed), ...live]);
      expect(JSON.parse(messages[0]!.data).bodyMarkdown).to.equal('before the stream ü');
      expect(events.filter((e) => e.event === 'heartbeat').length).to.be.greaterThan(0);
      expect(events.at(-1)!.event).to.equal('handoff');
    });
  });
}
