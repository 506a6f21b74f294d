import { expect } from 'chai';
import { RawStreamResponse } from '../http/raw-stream-response.ts';
import type { StreamSession } from '../domain/stream-session.ts';
import { GatewayHarness, roomEventsPath } from '../../test/gateway-harness.ts';
import { openSse, type SseClient } from '../../test/sse-client.ts';

describe('the gateway’s routes through the stream front', function () {
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

  it('holds the caller\'s inbox across repositories on its socket too', async () => {
    const client = await openSse(h.url, '/v1/inbox/events', await h.token('u_bob'));
    clients.push(client);
    expect(client.response.status).to.equal(200);
    expect(client.response.headers['connection']).to.equal('close');
    const sessions = [...(h.gateway.hub as unknown as { sessions: Set<StreamSession> }).sessions];
    const feed = sessions.find((s) => s.source.scopeKey === 'feed:human:u_bob');
    expect(feed, 'the stream of the feed').not.to.equal(undefined);
    expect(Object.getPrototypeOf(feed!.output.response) === RawStreamResponse.prototype, 'held on its socket').to.equal(true);
  });

  it('serves every spelling the pipeline routes through the front: a percent-escape is answered SCOPE_INVALID, another case opens', async () => {
    const token = await h.token();
    const escaped = await openSse(h.url, `/v1/repositories/%ZZ/room/events`, token);
    expect(escaped.response.status).to.equal(400);
    expect(escaped.response.body.error.code).to.equal('SCOPE_INVALID');
    // Literals match whatever their case, as express's router matched them.
    const repo = h.repository();
    const shouted = await openSse(h.url, roomEventsPath(repo.id).replace('/room/events', '/ROOM/events'), token);
    clients.push(shouted);
    expect(shouted.response.status).to.equal(200);
    expect(heldResponses().every((res) => Object.getPrototypeOf(res) === RawStreamResponse.prototype), 'every stream is held on its socket').to.equal(true);
  });

  it('answers HEAD of a stream 405 with Allow: GET, and another method 405 through Node’s server', async () => {
    const repo = h.repository();
    const head = await fetch(h.url + roomEventsPath(repo.id), { method: 'HEAD' });
    expect(head.status).to.equal(405);
    expect(head.headers.get('allow')).to.equal('GET');
    const post = await fetch(h.url + roomEventsPath(repo.id), { method: 'POST' });
    expect(post.status).to.equal(405);
    expect(((await post.json()) as { error: { code: string } }).error.code).to.equal('REQUEST_INVALID');
  });
});
