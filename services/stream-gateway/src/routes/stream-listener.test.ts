import { expect } from 'chai';
import { ServerResponse } from 'node:http';
import { RawStreamResponse } from '../http/raw-stream-response.ts';
import type { StreamSession } from '../domain/stream-session.ts';
import { GatewayHarness, roomEventsPath } from '../../test/gateway-harness.ts';
import { openSse, type SseClient } from '../../test/sse-client.ts';

describe('the standalone request listener', function () {
  this.timeout(60_000);
  // postgres+redis: the harness serves this target as main.ts does: the stream front, then `gateway.listener`.
  const h = new GatewayHarness({ target: 'postgres+redis', repositories: 4 });
  const clients: SseClient[] = [];
  before(() => h.start());
  after(async () => {
    for (const c of clients) c.close();
    await h.stop();
  });

  const heldResponses = () =>
    [...(h.gateway.hub as unknown as { sessions: Set<StreamSession> }).sessions].map((s) => s.output.response);

  it('holds a plain stream GET on the socket (no Node request or response), with the request headers (and the bearer token) let go', async () => {
    const token = await h.token();
    const client = await openSse(h.url, roomEventsPath(h.repository().id), token);
    clients.push(client);
    expect(client.response.status).to.equal(200);
    expect(client.response.headers['connection']).to.equal('close');
    expect(client.response.headers['content-type']).to.equal('text/event-stream');
    expect(client.response.headers['x-request-id']).to.match(/^[0-9A-Z]{26}$/);
    const [res] = heldResponses();
    expect(Object.getPrototypeOf(res)).to.equal(RawStreamResponse.prototype);
    expect(JSON.stringify(res!.req.headers)).not.to.contain(token);
    expect(res!.req.rawHeaders.join('\n')).not.to.contain(token);
  });

  it('leaves what it does not serve to express, which answers as before', async () => {
    const token = await h.token();
    // A percent-escape in the scope: express decodes it and answers SCOPE_INVALID.
    const escaped = await openSse(h.url, `/v1/repositories/%ZZ/room/events`, token);
    expect(escaped.response.status).to.equal(400);
    expect(escaped.response.body.error.code).to.equal('SCOPE_INVALID');
    // Another spelling of the path: express's routes are case-insensitive, so it still opens.
    const repo = h.repository();
    const shouted = await openSse(h.url, roomEventsPath(repo.id).replace('/room/events', '/ROOM/events'), token);
    clients.push(shouted);
    expect(shouted.response.status).to.equal(200);
    const held = heldResponses();
    expect(held.some((res) => ![RawStreamResponse.prototype, ServerResponse.prototype].includes(Object.getPrototypeOf(res))), 'one stream was opened by express').to.equal(true);
  });
});
