import { expect } from 'chai';
import type { MessageResponse } from '@chat/contracts';
import { ApiClient, roomPath, type RoomScope } from '../harness/api-client.ts';
import { expectError, expectStatus } from '../harness/assertions.ts';
import { startGatewayCluster, type GatewayCluster } from '../harness/gateway-cluster.ts';
import { openSse } from '../harness/sse-stream.ts';

/** Bodies that would forge or split events if the gateway framed them naively. */
const HOSTILE_BODIES = [
  'line one\nline two',
  'carriage\rreturn',
  'crlf\r\nend',
  'trailing CR\r',
  'nul\u0000byte',
  'line\u2028separator and paragraph\u2029separator',
  '\n\ndata: forged\n\nid: x',
  'event: handoff\ndata: {"reason":"stream_rotation"}\n\n',
  'id: 0\r\rdata: x\r\r',
  'retry: 1\n: a comment\n',
  '\r\n\r\nevent: reauthorize\r\ndata: {}\r\n\r\n',
  '\uFEFFbyte order mark first',
  'emoji 🧵 and astral 𝕏 and é',
  'data:',
  '   leading spaces and trailing tab\t',
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('streams: SSE framing and hostile Last-Event-ID values through a real gateway (reliability test 9)', function () {
  this.timeout(90_000);
  let cluster: GatewayCluster;
  let gateway: ApiClient;

  before(async () => {
    cluster = await startGatewayCluster({ apis: 1, gateways: 1 });
    gateway = new ApiClient(cluster.gateways[0]!.url);
  });
  after(async () => {
    gateway?.close();
    await cluster?.stop();
  });

  async function appendAll(scope: RoomScope, token: string, bodies: string[]): Promise<MessageResponse[]> {
    const sent: MessageResponse[] = [];
    for (const bodyMarkdown of bodies) {
      const answer = await cluster.apiClients[0]!.append<MessageResponse>(scope, token, { bodyMarkdown });
      expectStatus(answer, 201);
      sent.push(answer.body);
    }
    return sent;
  }

  it('an independent parser (eventsource-parser) sees exactly one message event per message, data byte-equal, in replay and live', async () => {
    const { scenario, actors } = await cluster.scenario();
    const scope = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
    const writer = await actors.writer();
    // Half before the stream opens (durable replay), half while it is open (live delivery).
    const half = Math.ceil(HOSTILE_BODIES.length / 2);
    const replayed = await appendAll(scope, writer, HOSTILE_BODIES.slice(0, half));
    const stream = await openSse(`${cluster.gateways[0]!.url}${roomPath(scope)}/events`, await actors.reader(), { keepRaw: true });
    expect(stream.status, stream.errorBody).to.equal(200);
    expect(stream.headers['content-type']).to.match(/^text\/event-stream/);
    const live = await appendAll(scope, writer, HOSTILE_BODIES.slice(half));
    const sent = [...replayed, ...live];
    const deadline = Date.now() + 10_000;
    while (stream.events.filter((e) => e.event === 'message').length < sent.length && Date.now() < deadline) await sleep(50);
    await sleep(300); // anything forged would arrive with the last frames
    stream.close();

    const kinds = stream.events.map((e) => e.event ?? 'message');
    expect(kinds.filter((k) => k !== 'heartbeat'), 'only message events, one per message').to.deep.equal(sent.map(() => 'message'));
    const messages = stream.events.filter((e) => e.event === 'message');
    for (const [i, event] of messages.entries()) {
      const data = JSON.parse(event.data) as MessageResponse;
      expect(data.messageId).to.equal(sent[i]!.messageId);
      expect(Buffer.from(data.bodyMarkdown, 'utf8').equals(Buffer.from(HOSTILE_BODIES[i]!, 'utf8')), `body ${i} byte-equal`).to.equal(true);
      expect(data).to.deep.equal(sent[i]);
      expect(event.id, 'the id is the durable cursor: one token, no spaces').to.match(/^[A-Za-z0-9_-]+$/);
    }
    const raw = Buffer.concat(stream.raw).toString('utf8');
    expect(raw, 'no raw NUL on the wire').to.not.include('\u0000');
    expect(raw, 'U+2028/U+2029 are escaped (line breaks to some JavaScript consumers)').to.not.match(/[\u2028\u2029]/);
    expect(raw.split('\n').filter((l) => l.startsWith('data: forged') || l.startsWith('id: x')), 'no forged field line').to.deep.equal([]);
  });

  it('hostile Last-Event-ID and cursor values give 400 CURSOR_INVALID before the stream opens, never echoed', async () => {
    const { scenario, actors } = await cluster.scenario();
    const scope = { repositoryId: scenario.repositoryId };
    const other = { repositoryId: scenario.otherRepositoryId };
    const writer = await actors.writer();
    const reader = await actors.reader();
    await appendAll(scope, writer, ['one', 'two']);
    await appendAll(other, writer, ['elsewhere']);
    const idOf = async (room: RoomScope) => {
      const s = await openSse(`${cluster.gateways[0]!.url}${roomPath(room)}/events`, reader);
      const deadline = Date.now() + 5000;
      while (!s.events.some((e) => e.event === 'message') && Date.now() < deadline) await sleep(20);
      s.close();
      return s.events.find((e) => e.event === 'message')!.id!;
    };
    const valid = await idOf(scope);
    const foreign = await idOf(other);
    const flipped = valid.slice(0, -2) + (valid.at(-2) === 'A' ? 'B' : 'A') + valid.at(-1);
    const hostile = [
      ['another room\'s cursor', foreign],
      ['a forged cursor (one character changed)', flipped],
      ['a truncated cursor', valid.slice(0, Math.floor(valid.length / 2))],
      ['a cursor with a suffix', `${valid}x`],
      ['8 KiB of text', 'A'.repeat(8192)],
      ['percent-encoded CRLF and a forged event', '%0d%0aevent: handoff%0d%0a%0d%0adata: forged'],
      ['a script tag', '<script>alert(1)</script>'],
      ['Latin-1 bytes', 'caf\u00e9\u00ff'],
      ['JSON', '{"seq":1}'],
      ['a negative number', '-1'],
    ] as const;
    for (const [what, value] of hostile) {
      for (const via of ['header', 'query'] as const) {
        const path = `${roomPath(scope)}/events${via === 'query' ? `?cursor=${encodeURIComponent(value)}` : ''}`;
        const answer = await gateway.send({
          method: 'GET',
          path,
          headers: { accept: 'text/event-stream', authorization: `Bearer ${reader}`, ...(via === 'header' ? { 'last-event-id': value } : {}) },
        });
        expect(answer.status, `${what} via ${via}: ${answer.text}`).to.equal(400);
        expectError(answer, 400, 'CURSOR_INVALID');
        const echoed = value.length > 3 && (answer.text.includes(value) || JSON.stringify(answer.headers).includes(value));
        expect(echoed, `${what} via ${via} is not echoed`).to.equal(false);
      }
    }
    // Both inputs with different values: CURSOR_CONFLICT; equal values are one cursor.
    const conflict = await gateway.send({
      method: 'GET',
      path: `${roomPath(scope)}/events?cursor=${encodeURIComponent(flipped)}`,
      headers: { accept: 'text/event-stream', authorization: `Bearer ${reader}`, 'last-event-id': valid },
    });
    expectError(conflict, 400, 'CURSOR_CONFLICT');
    const same = await openSse(`${cluster.gateways[0]!.url}${roomPath(scope)}/events?cursor=${encodeURIComponent(valid)}`, reader, { headers: { 'last-event-id': valid } });
    expect(same.status, same.errorBody).to.equal(200);
    const deadline = Date.now() + 5000;
    while (!same.events.some((e) => e.event === 'message') && Date.now() < deadline) await sleep(20);
    same.close();
    expect(same.events.filter((e) => e.event === 'message').map((e) => (JSON.parse(e.data) as MessageResponse).bodyMarkdown), 'resumes after the cursor').to.deep.equal(['two']);
  });
});
