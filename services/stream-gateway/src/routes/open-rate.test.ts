import { expect } from 'chai';
import { GatewayHarness, roomEventsPath } from '../../test/gateway-harness.ts';
import { inboxEventsPath } from '../../test/inbox-fixture.ts';
import { openSse, type SseClient } from '../../test/sse-client.ts';

const PRINCIPAL_INBOX_PATH = '/v1/inbox/events';

describe('stream-open rate of one process (postgres+redis)', function () {
  this.timeout(30_000);
  // A refill of one open per 100 s: the burst is all the test gets.
  const h = new GatewayHarness({ target: 'postgres+redis', engine: { opensPerSecond: 0.01, openBurst: 2 } });
  const clients: SseClient[] = [];
  const open = async (path: string, token: string | undefined) => {
    const client = await openSse(h.url, path, token);
    clients.push(client);
    return client;
  };
  /** The sum of a series over its labels, from the exposition text. */
  const metric = async (name: string): Promise<number> => {
    const lines = (await h.gateway.metrics.registry.metrics()).split('\n').filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`));
    return lines.reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  };

  before(() => h.start());
  after(async () => {
    for (const c of clients.splice(0)) c.close();
    await h.stop();
  });

  it('opens the burst, then refuses every stream route with 503 STREAM_UNAVAILABLE and Retry-After before the token, core or a lease', async () => {
    const token = await h.token();
    const repo = h.repository();
    for (let i = 0; i < 2; i++) {
      const opened = await open(roomEventsPath(repo.id), token);
      expect(opened.response.status).to.equal(200);
    }
    const coreCallsBefore = await metric('chat_core_call_duration_seconds_count');
    expect(coreCallsBefore, 'the opens called core').to.be.greaterThan(0);
    const refusals = [
      await open(roomEventsPath(repo.id), token),
      await open(roomEventsPath(repo.id, repo.activeBranch), token),
      await open(inboxEventsPath(repo.id), token),
      await open(PRINCIPAL_INBOX_PATH, token),
      // A bad token is not even read: the refusal comes first.
      await open(roomEventsPath(repo.id), 'a.b.c'),
    ];
    for (const refused of refusals) {
      expect(refused.response.status).to.equal(503);
      expect(refused.response.body.error.code).to.equal('STREAM_UNAVAILABLE');
      expect(refused.response.headers['retry-after']).to.match(/^[1-9][0-9]*$/);
    }
    expect(await metric('chat_core_call_duration_seconds_count')).to.equal(coreCallsBefore);
    expect(await metric('chat_gateway_stream_opens_throttled_total')).to.equal(refusals.length);
    // The health check is no stream and is never refused.
    const health = await fetch(`${h.url}/healthz`);
    expect(health.status).to.equal(200);
  });
});
