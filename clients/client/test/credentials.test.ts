import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { expect } from 'chai';
import { ChatApiError, ChatClient, ChatInsecureTransportError, ChatNetworkError, ChatTokenRejectedError, isLoopbackHost } from '../src/index.ts';

/**
 * The client's handling of credentials and transport, against a scripted HTTP server: the token
 * forms it accepts, the headers it sends, which 401 asks the provider again, and where it refuses
 * to send a token at all. The real service is exercised in tests/clients/sdk-rest.test.ts.
 */
type Answer = (req: IncomingMessage, res: ServerResponse) => void;

interface Recording {
  url: string;
  requests: Array<{ method: string; authorization: string | undefined; core: string | undefined }>;
  close(): Promise<void>;
}

async function recordingServer(answers: Answer[]): Promise<Recording> {
  const requests: Recording['requests'] = [];
  const server: Server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', authorization: req.headers.authorization, core: req.headers['x-service-core-authorization'] as string | undefined });
    req.resume();
    req.on('end', () => (answers[requests.length - 1] ?? ok)(req, res));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const ok: Answer = (_req, res) => {
  res.writeHead(201, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ messageId: 'm1' }));
};
const refuse =
  (code: string): Answer =>
  (_req, res) => {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code, message: code.toLowerCase(), requestId: 'r1' } }));
  };

const REPOSITORY = '01J00000000000000000000000';

describe('ChatClient credentials and transport', function () {
  this.timeout(20_000);
  let server: Recording | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('takes the bare token everywhere and adds "Bearer " itself; a value already in header form is taken as its token', async () => {
    server = await recordingServer([]);
    const bare = new ChatClient({ baseUrl: server.url, token: 'a.b.c' });
    await bare.appendRepositoryMessage(REPOSITORY, { bodyMarkdown: 'x', mentions: [] }, { coreResourceToken: 'core.t.k' });
    const headerForm = new ChatClient({ baseUrl: server.url, token: () => 'Bearer a.b.c\n' });
    await headerForm.appendRepositoryMessage(REPOSITORY, { bodyMarkdown: 'x' }, { coreResourceToken: 'bearer core.t.k' });
    expect(server.requests).to.deep.equal([
      { method: 'POST', authorization: 'Bearer a.b.c', core: 'Bearer core.t.k' },
      { method: 'POST', authorization: 'Bearer a.b.c', core: 'Bearer core.t.k' },
    ]);
  });

  it('refuses a token value that is neither bare nor in header form, saying so, without sending it', async () => {
    server = await recordingServer([]);
    expect(() => new ChatClient({ baseUrl: server!.url, token: 'one two' })).to.throw(TypeError, /token must be the bare token/);
    const client = new ChatClient({ baseUrl: server.url, token: 'a.b.c' });
    const failure = await client.appendRepositoryMessage(REPOSITORY, { bodyMarkdown: 'x' }, { coreResourceToken: 'Basic a b' }).catch((e: unknown) => e);
    expect(failure).to.be.instanceOf(TypeError).with.property('message').that.contains('coreResourceToken must be the bare token');
    expect(server.requests).to.have.length(0);
  });

  it('a 401 TOKEN_REJECTED asks the provider once more; a second refusal is a ChatTokenRejectedError naming the service', async () => {
    server = await recordingServer([refuse('TOKEN_REJECTED'), refuse('TOKEN_REJECTED')]);
    const asked: boolean[] = [];
    const client = new ChatClient({ baseUrl: server.url, token: ({ forceRefresh }) => (asked.push(forceRefresh), forceRefresh ? 'new.t.k' : 'old.t.k') });
    const failure = await client.getRepositoryRoom(REPOSITORY).catch((e: unknown) => e);
    expect(failure).to.be.instanceOf(ChatTokenRejectedError).and.include({ code: 'TOKEN_REJECTED', status: 401, baseUrl: server.url, renewable: true, attempts: 2 });
    expect((failure as Error).message).to.contain(`the service at ${server.url} refused the token`);
    expect(asked).to.deep.equal([false, true]);
    expect(server.requests.map((r) => r.authorization)).to.deep.equal(['Bearer old.t.k', 'Bearer new.t.k']);
  });

  it('a 401 CORE_RESOURCE_TOKEN_REJECTED is about the lent core credential: no refresh, no second send', async () => {
    server = await recordingServer([refuse('CORE_RESOURCE_TOKEN_REJECTED')]);
    const asked: boolean[] = [];
    const client = new ChatClient({ baseUrl: server.url, token: ({ forceRefresh }) => (asked.push(forceRefresh), 'a.b.c') });
    const failure = await client.appendRepositoryMessage(REPOSITORY, { bodyMarkdown: 'x' }, { coreResourceToken: 'c.o.re' }).catch((e: unknown) => e);
    expect(failure).to.be.instanceOf(ChatApiError).and.not.be.instanceOf(ChatTokenRejectedError);
    expect(failure).to.include({ code: 'CORE_RESOURCE_TOKEN_REJECTED', attempts: 1 });
    expect(asked).to.deep.equal([false]);
    expect(server.requests).to.have.length(1);
  });

  it('a network failure names the base URL it tried', async () => {
    server = await recordingServer([]);
    const closed = server.url;
    await server.close();
    server = undefined;
    const client = new ChatClient({ baseUrl: closed, token: 't', retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 } });
    const failure = await client.getRepositoryRoom(REPOSITORY).catch((e: unknown) => e);
    expect(failure).to.be.instanceOf(ChatNetworkError).and.include({ baseUrl: closed });
    expect((failure as Error).message).to.match(new RegExp(`^cannot reach the service at ${closed}: no answer to GET /v1/repositories/${REPOSITORY}/room after 2 attempts`));
  });

  it('refuses plain http to a host that is not loopback unless allowInsecureHttp; https and loopback need nothing', () => {
    for (const url of ['http://chat.example.com', 'http://10.0.0.8:8080', 'http://[fe80::1]:8080', 'http://127.example.com']) {
      expect(() => new ChatClient({ baseUrl: url, token: 't' }), url).to.throw(ChatInsecureTransportError, `refusing to send a token over plain http to ${url}`);
      expect(() => new ChatClient({ baseUrl: url, token: 't', allowInsecureHttp: true }), url).to.not.throw();
    }
    for (const url of ['https://chat.example.com', 'http://127.0.0.1:8080', 'http://127.1.2.3', 'http://localhost:8080', 'http://LOCALHOST', 'http://[::1]:8080']) {
      expect(() => new ChatClient({ baseUrl: url, token: 't' }), url).to.not.throw();
    }
    expect(isLoopbackHost('[::1]')).to.equal(true);
    expect(isLoopbackHost('0.0.0.0')).to.equal(false);
  });
});
