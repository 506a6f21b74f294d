import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { expect } from 'chai';
import { ChatClient, ChatStreamError, ChatTokenRejectedError, type RoomMessageEvent, type StreamStatus } from '../src/index.ts';

/**
 * Protocol-level tests of the consumer's rules (spec 6, rule 7 and 8) against a scripted
 * text/event-stream server: each connection is answered by the next step of a script, so cases the
 * real gateway produces only by chance (a replay of the last event, a repeated `reauthorize`, a
 * durable event without id) are shown on demand. The real gateways are exercised in
 * tests/clients/sdk-stream-faults.test.ts.
 */
type Step = (req: IncomingMessage, res: ServerResponse) => void;

interface Scripted {
  url: string;
  requests: Array<{ url: string; lastEventId: string | undefined; authorization: string | undefined; at: number }>;
  close(): Promise<void>;
}

async function scriptedServer(steps: Step[]): Promise<Scripted> {
  const requests: Scripted['requests'] = [];
  const open = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    requests.push({ url: req.url ?? '', lastEventId: req.headers['last-event-id'] as string | undefined, authorization: req.headers.authorization, at: Date.now() });
    open.add(res);
    res.on('close', () => open.delete(res));
    const step = steps[requests.length - 1] ?? hold();
    step(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    close: async () => {
      for (const res of open) res.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const message = (n: number) => ({ messageId: `m${n}`, bodyMarkdown: `message ${n}` });
const frame = (event: string, data: unknown, id?: string) => `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** Answers 200 with these frames, then ends the stream (or keeps it open with `hold`). */
function sse(frames: string[], end = true): Step {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'r1' });
    for (const f of frames) res.write(f);
    if (end) res.end();
  };
}
function hold(): Step {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
  };
}
function refuse(status: number, code: string, headers: Record<string, string> = {}): Step {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req-${code}`, ...headers });
    res.end(JSON.stringify({ error: { code, message: code.toLowerCase(), requestId: `req-${code}` } }));
  };
}

const REPOSITORY = '01J00000000000000000000000';

function consumer(
  server: Scripted,
  tokens: boolean[] = [],
  options: { heartbeatIntervalMs?: number; heartbeatTimeoutFactor?: number; backoff?: { baseDelayMs: number; maxDelayMs: number; random?: () => number } } = {},
) {
  const statuses: StreamStatus[] = [];
  const client = new ChatClient({
    baseUrl: server.url,
    token: ({ forceRefresh }) => {
      tokens.push(forceRefresh);
      return forceRefresh ? 'fresh-token' : 'first-token';
    },
  });
  const stream = client.streamRoom({ repositoryId: REPOSITORY }, { backoff: { baseDelayMs: 20, maxDelayMs: 50 }, heartbeatIntervalMs: 1000, onStatus: (s) => statuses.push(s), ...options });
  return { stream, statuses };
}

describe('ChatEventStream rules against a scripted event stream', function () {
  this.timeout(20_000);
  let server: Scripted | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('rule 7: the replay of the last processed event after a reconnect is dropped; Last-Event-ID is the last processed cursor', async () => {
    server = await scriptedServer([
      sse([frame('message', message(1), 'c1'), frame('heartbeat', { serverTime: 'now' }), frame('message', message(2), 'c2')]),
      sse([frame('message', message(2), 'c2'), frame('message', message(3), 'c3')], false),
    ]);
    const { stream } = consumer(server);
    const seen: string[] = [];
    await stream.run((event) => {
      seen.push(event.data.messageId);
      if (seen.length === 3) stream.close();
    });
    expect(seen).to.deep.equal(['m1', 'm2', 'm3']);
    expect(server.requests.map((r) => r.lastEventId)).to.deep.equal([undefined, 'c2']);
    expect(stream.cursor).to.equal('c3');
  });

  it('the cursor advances only when the handler returns: a throwing handler leaves it before that event', async () => {
    server = await scriptedServer([sse([frame('message', message(1), 'c1'), frame('message', message(2), 'c2')], false)]);
    const { stream } = consumer(server);
    const failure = await stream
      .run((event) => {
        if (event.id === 'c2') throw new Error('handler failed');
      })
      .catch((e: unknown) => e);
    expect((failure as Error).message).to.equal('handler failed');
    expect(stream.cursor).to.equal('c1');
    expect(stream.state).to.equal('closed');
  });

  it('iterator form: an event counts as processed when the loop asks for the next one; a break leaves it unprocessed', async () => {
    server = await scriptedServer([sse([frame('message', message(1), 'c1'), frame('message', message(2), 'c2'), frame('message', message(3), 'c3')], false)]);
    const { stream } = consumer(server);
    const cursors: Array<string | undefined> = [];
    for await (const event of stream) {
      cursors.push(stream.cursor);
      if ((event as RoomMessageEvent).id === 'c2') break;
    }
    expect(cursors).to.deep.equal([undefined, 'c1']);
    expect(stream.cursor).to.equal('c1');
  });

  it('heartbeats advance nothing; silence past heartbeatTimeoutFactor intervals is a dead connection', async () => {
    server = await scriptedServer([
      sse([frame('message', message(1), 'c1'), frame('heartbeat', { serverTime: 'now' })], false),
      sse([frame('message', message(2), 'c2')], false),
    ]);
    const { stream, statuses } = consumer(server, [], { heartbeatIntervalMs: 100, heartbeatTimeoutFactor: 2 });
    const seen: string[] = [];
    await stream.run((event) => {
      seen.push(event.id);
      if (seen.length === 2) stream.close();
    });
    expect(seen).to.deep.equal(['c1', 'c2']);
    expect(statuses.map((s) => s.reason)).to.include.members(['heartbeat', 'silence']);
    expect(statuses.find((s) => s.reason === 'heartbeat')!.cursor, 'the heartbeat did not move the cursor').to.equal('c1');
    expect(server.requests[1]!.lastEventId).to.equal('c1');
  });

  it('handoff reconnects at once from the last cursor, without backoff', async () => {
    server = await scriptedServer([sse([frame('message', message(1), 'c1'), frame('handoff', { reason: 'stream_rotation' })], false), sse([frame('message', message(2), 'c2')], false)]);
    const { stream, statuses } = consumer(server);
    await stream.run((event) => void (event.id === 'c2' && stream.close()));
    const after = statuses[statuses.findIndex((s) => s.reason === 'handoff') + 1];
    expect(after?.state).to.equal('connecting');
    expect(statuses.some((s) => s.state === 'backoff')).to.equal(false);
    expect(server.requests.map((r) => r.lastEventId)).to.deep.equal([undefined, 'c1']);
  });

  it('reauthorize asks the token provider once for fresh authority; a second reauthorize right away stops with reauthorize_repeated', async () => {
    server = await scriptedServer([
      sse([frame('message', message(1), 'c1'), frame('reauthorize', { reason: 'access_changed' })], false),
      sse([frame('reauthorize', { reason: 'access_changed' })], false),
    ]);
    const tokens: boolean[] = [];
    const { stream } = consumer(server, tokens);
    const failure = await stream.run(() => undefined).catch((e: unknown) => e);
    expect(failure).to.be.instanceOf(ChatStreamError).and.include({ reason: 'reauthorize_repeated', cursor: 'c1' });
    expect(tokens).to.deep.equal([false, true]);
    expect(server.requests.map((r) => r.authorization)).to.deep.equal(['Bearer first-token', 'Bearer fresh-token']);
  });

  it('reauthorize followed by a refused fresh-authority request (403) stops with reauthorize_denied and the API error as cause', async () => {
    server = await scriptedServer([sse([frame('message', message(1), 'c1'), frame('reauthorize', { reason: 'access_changed' })], false), refuse(403, 'AUTHORIZATION_DENIED')]);
    const { stream } = consumer(server);
    const failure = (await stream.run(() => undefined).catch((e: unknown) => e)) as ChatStreamError;
    expect(failure).to.be.instanceOf(ChatStreamError).and.include({ reason: 'reauthorize_denied', cursor: 'c1' });
    expect((failure.cause as { code: string }).code).to.equal('AUTHORIZATION_DENIED');
    expect(server.requests).to.have.length(2);
  });

  it('reauthorize then a granted connection that delivers: the consumer goes on', async () => {
    server = await scriptedServer([
      sse([frame('message', message(1), 'c1'), frame('reauthorize', { reason: 'access_changed' })], false),
      sse([frame('message', message(2), 'c2'), frame('reauthorize', { reason: 'access_changed' })], false),
      sse([frame('message', message(3), 'c3')], false),
    ]);
    const tokens: boolean[] = [];
    const { stream } = consumer(server, tokens);
    await stream.run((event) => void (event.id === 'c3' && stream.close()));
    expect(tokens).to.deep.equal([false, true, true]);
  });

  it('429 waits Retry-After before reconnecting', async () => {
    server = await scriptedServer([refuse(429, 'STREAM_PRINCIPAL_LIMIT', { 'retry-after': '1' }), sse([frame('message', message(1), 'c1')], false)]);
    const { stream, statuses } = consumer(server);
    await stream.run(() => stream.close());
    expect(server.requests[1]!.at - server.requests[0]!.at).to.be.at.least(1000);
    expect(statuses.find((s) => s.reason === 'http_429')!.delayMs).to.be.at.least(1000);
  });

  it('503 with Retry-After (a gateway at its open rate) waits at least Retry-After plus full jitter before reconnecting', async () => {
    server = await scriptedServer([refuse(503, 'STREAM_UNAVAILABLE', { 'retry-after': '1' }), sse([frame('message', message(1), 'c1')], false)]);
    const { stream, statuses } = consumer(server, [], { backoff: { baseDelayMs: 400, maxDelayMs: 400, random: () => 0.5 } });
    await stream.run(() => stream.close());
    expect(statuses.find((s) => s.reason === 'http_503')!.delayMs).to.equal(1200);
    expect(server.requests[1]!.at - server.requests[0]!.at).to.be.at.least(1200);
  });

  it('a cut connection reconnects after full jitter over the first step, from the injected random source', async () => {
    server = await scriptedServer([sse([frame('message', message(1), 'c1')], true), sse([frame('message', message(2), 'c2')], false)]);
    const { stream, statuses } = consumer(server, [], { backoff: { baseDelayMs: 1000, maxDelayMs: 1000, random: () => 0.05 } });
    await stream.run((event) => {
      if (event.id === 'c2') stream.close();
    });
    const backoff = statuses.find((s) => s.state === 'backoff')!;
    expect(backoff.delayMs).to.equal(50);
  });

  it('a refusal retrying cannot fix (400) stops at once; the token is only ever in the Authorization header', async () => {
    server = await scriptedServer([refuse(400, 'CURSOR_INVALID')]);
    const { stream } = consumer(server);
    const failure = await stream.run(() => undefined).catch((e: unknown) => e);
    expect(failure).to.be.instanceOf(ChatStreamError).and.include({ reason: 'rejected' });
    expect(server.requests).to.have.length(1);
    expect(server.requests[0]!.url).to.equal(`/v1/repositories/${REPOSITORY}/room/events`);
  });

  it('a message event without an id breaks the contract: the consumer stops instead of guessing a cursor', async () => {
    server = await scriptedServer([sse([frame('message', message(1), 'c1'), frame('message', message(2))], false)]);
    const { stream } = consumer(server);
    const failure = await stream.run(() => undefined).catch((e: unknown) => e);
    expect(failure).to.be.instanceOf(ChatStreamError).and.include({ reason: 'protocol_error', cursor: 'c1' });
  });

  it('5xx and cut connections reconnect with backoff from the same cursor, never skipping forward', async () => {
    server = await scriptedServer([
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(frame('message', message(1), 'c1'));
        // Half of the next event, then the connection dies: that event must come again, whole.
        res.write('id: c2\nevent: message\ndata: {"messageId"');
        setTimeout(() => res.destroy(), 50);
      },
      refuse(503, 'STREAM_UNAVAILABLE'),
      sse([frame('message', message(2), 'c2')], false),
    ]);
    const { stream, statuses } = consumer(server);
    const seen: string[] = [];
    await stream.run((event) => {
      seen.push(event.id);
      if (event.id === 'c2') stream.close();
    });
    expect(seen).to.deep.equal(['c1', 'c2']);
    expect(server.requests.map((r) => r.lastEventId)).to.deep.equal([undefined, 'c1', 'c1']);
    expect(statuses.filter((s) => s.state === 'backoff').map((s) => s.reason)).to.deep.equal(['network', 'http_503']);
  });

  it('maxReconnectAttempts bounds the reconnects in a row without progress (retries_exhausted)', async () => {
    server = await scriptedServer([refuse(503, 'STREAM_UNAVAILABLE'), refuse(503, 'STREAM_UNAVAILABLE'), refuse(503, 'STREAM_UNAVAILABLE'), refuse(503, 'STREAM_UNAVAILABLE')]);
    const client = new ChatClient({ baseUrl: server.url, token: 't' });
    const stream = client.streamRoom({ repositoryId: REPOSITORY }, { backoff: { baseDelayMs: 5, maxDelayMs: 10 }, maxReconnectAttempts: 2 });
    const failure = await stream.run(() => undefined).catch((e: unknown) => e);
    expect(failure).to.be.instanceOf(ChatStreamError).and.include({ reason: 'retries_exhausted' });
    expect(server.requests).to.have.length(3);
  });

  it('aborting the signal closes the stream: run resolves and the cursor stays at the last processed event', async () => {
    server = await scriptedServer([sse([frame('message', message(1), 'c1')], false)]);
    const controller = new AbortController();
    const client = new ChatClient({ baseUrl: server.url, token: 't' });
    const stream = client.streamRoom({ repositoryId: REPOSITORY }, { signal: controller.signal });
    await stream.run(() => void setTimeout(() => controller.abort(), 50));
    expect(stream.state).to.equal('closed');
    expect(stream.cursor).to.equal('c1');
  });

  it('a refused token (401 TOKEN_REJECTED) asks the provider once; its fresh token refused too stops (rejected) naming the service', async () => {
    server = await scriptedServer([sse([frame('message', message(1), 'c1')]), refuse(401, 'TOKEN_REJECTED'), refuse(401, 'TOKEN_REJECTED')]);
    const tokens: boolean[] = [];
    const { stream } = consumer(server, tokens);
    const failure = (await stream.run(() => undefined).catch((e: unknown) => e)) as ChatStreamError;
    expect(failure).to.be.instanceOf(ChatStreamError).and.include({ reason: 'rejected', cursor: 'c1' });
    expect(failure.cause).to.be.instanceOf(ChatTokenRejectedError).and.include({ code: 'TOKEN_REJECTED', status: 401, baseUrl: server.url, renewable: true });
    expect(failure.message).to.contain(`the service at ${server.url} refused the token`);
    expect(tokens).to.deep.equal([false, false, true]);
    expect(server.requests.map((r) => r.authorization)).to.deep.equal(['Bearer first-token', 'Bearer first-token', 'Bearer fresh-token']);
  });

  it('a connection opened with the fresh token counts as its acceptance: a refusal later on is asked about again', async () => {
    server = await scriptedServer([
      refuse(401, 'TOKEN_REJECTED'),
      sse([frame('message', message(1), 'c1')]),
      refuse(401, 'TOKEN_REJECTED'),
      sse([frame('message', message(2), 'c2')], false),
    ]);
    const tokens: boolean[] = [];
    const { stream } = consumer(server, tokens);
    const seen: string[] = [];
    await stream.run((event) => {
      seen.push(event.id);
      if (event.id === 'c2') stream.close();
    });
    expect(seen).to.deep.equal(['c1', 'c2']);
    expect(tokens).to.deep.equal([false, true, false, true]);
  });

  it('a fixed token refused stops at once (rejected), and the error says a provider function renews it', async () => {
    server = await scriptedServer([refuse(401, 'TOKEN_REJECTED')]);
    const stream = new ChatClient({ baseUrl: server.url, token: 'fixed' }).streamRoom({ repositoryId: REPOSITORY });
    const failure = (await stream.run(() => undefined).catch((e: unknown) => e)) as ChatStreamError;
    expect(failure).to.include({ reason: 'rejected' });
    expect(failure.cause).to.be.instanceOf(ChatTokenRejectedError).and.include({ renewable: false });
    expect(failure.message).to.contain('a fixed token cannot be renewed');
    expect(server.requests).to.have.length(1);
  });

  it('retries_exhausted names the base URL it could not reach', async () => {
    server = await scriptedServer([refuse(503, 'STREAM_UNAVAILABLE'), refuse(503, 'STREAM_UNAVAILABLE')]);
    const stream = new ChatClient({ baseUrl: server.url, token: 't' }).streamRoom({ repositoryId: REPOSITORY }, { backoff: { baseDelayMs: 5, maxDelayMs: 10 }, maxReconnectAttempts: 1 });
    const failure = await stream.run(() => undefined).catch((e: unknown) => e);
    expect(failure).to.be.instanceOf(ChatStreamError).and.include({ reason: 'retries_exhausted' });
    expect((failure as Error).message).to.contain(`cannot reach the service at ${server.url}`);
  });
});
