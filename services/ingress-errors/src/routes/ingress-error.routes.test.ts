import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { CANONICAL_ULID_PATTERN, ErrorEnvelopeSchema } from '@chat/contracts';

const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), '../..');
const OPENAPI = JSON.parse(readFileSync(join(PACKAGE_DIR, '../../clients/contracts/openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
};
const REPO = '01JGFJJZ00QNYBVPQTAT49MN0F';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The statuses the committed OpenAPI document declares for `method` on `template`. */
function declaredStatuses(template: string, method: string): string[] {
  return Object.keys(OPENAPI.paths[template]?.[method]?.responses ?? {});
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** One raw HTTP/1.1 exchange on its own socket, so what the process writes is what the test sees. */
async function exchange(port: number, head: string, body: Buffer = Buffer.alloc(0)): Promise<Answer> {
  const socket = connect(port, '127.0.0.1');
  // A large body may be answered before it is all sent and the socket closed under it (EPIPE or a
  // reset): what was answered is what counts, so the listener is there before any byte goes out.
  socket.on('error', () => undefined);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  // Not events.once: it would reject on that 'error' instead of waiting for the close.
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await once(socket, 'connect');
  socket.write(head.replace(/\n/g, '\r\n') + '\r\n');
  if (body.length > 0) socket.write(body);
  await closed;
  const text = Buffer.concat(chunks).toString('utf8');
  const [rawHead, ...rest] = text.split('\r\n\r\n');
  const [statusLine, ...lines] = rawHead!.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  const payload = rest.join('\r\n\r\n');
  return { status: Number(statusLine!.split(' ')[1]), headers, body: payload ? JSON.parse(payload) : undefined };
}

function expectEnvelope(answer: Answer, status: number, code: string, requestId?: string): string {
  expect(answer.status).to.equal(status);
  expect(answer.headers['content-type']).to.match(/^application\/json/);
  const envelope = ErrorEnvelopeSchema.parse(answer.body);
  expect(envelope.error.code).to.equal(code);
  expect(envelope.error.requestId).to.equal(answer.headers['x-request-id']);
  if (requestId !== undefined) expect(envelope.error.requestId).to.equal(requestId);
  return envelope.error.requestId;
}

describe('ingress error backend (the ingress-errors process over real HTTP)', function () {
  this.timeout(60_000);
  let child: ChildProcess;
  let port: number;
  let admin: number;
  let output = '';

  before(async () => {
    // What the ingress-errors Deployment runs (the package's start script, without pnpm), from the
    // sources. Both ports are the system's choice, read from its log: a port picked here and passed
    // on could be taken by another suite's process before the child binds it.
    child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@chat/source', 'src/main.ts'], {
      cwd: PACKAGE_DIR,
      env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', INGRESS_ERRORS_ADMIN_PORT: '0', ADMIN_HOST: '127.0.0.1', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    for (const deadline = Date.now() + 30_000; ; await sleep(100)) {
      const line = output.split('\n').find((l) => l.includes('ingress error backend listening'));
      if (line) {
        const listening = JSON.parse(line) as { port: number; admin: string };
        port = listening.port;
        admin = Number(new URL(listening.admin).port);
        const ready = await fetch(`${listening.admin}/readyz`).then((r) => r.status === 200, () => false);
        if (ready) break;
      }
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`ingress-errors did not start:\n${output}`);
    }
  });
  after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });

  it("answers the ingress's 413 (body above proxy-body-size) as the API answers an oversized body: 400 REQUEST_INVALID under the ingress's request ID", async () => {
    const answer = await exchange(
      port,
      `GET / HTTP/1.1\nHost: errors\nX-Code: 413\nX-Format: */*\nX-Original-URI: /v1/repositories/${REPO}/room/messages\nX-Request-ID: 3a35542b0611d3ee0915e196bffac546\nConnection: close\n`,
    );
    expectEnvelope(answer, 400, 'REQUEST_INVALID', '3a35542b0611d3ee0915e196bffac546');
    expect(declaredStatuses('/v1/repositories/{repositoryId}/room/messages', 'post')).to.include('400');
  });

  it('answers 502 and 504 with 503 and Retry-After: STREAM_UNAVAILABLE on stream paths, STORE_UNAVAILABLE elsewhere', async () => {
    const cases = [
      { code: 502, uri: `/v1/repositories/${REPO}/inbox/events?cursor=abc`, template: '/v1/repositories/{repositoryId}/inbox/events', method: 'get', expected: 'STREAM_UNAVAILABLE' },
      { code: 504, uri: `/v1/repositories/${REPO}/branches/${REPO}/room/events`, template: '/v1/repositories/{repositoryId}/branches/{branchId}/room/events', method: 'get', expected: 'STREAM_UNAVAILABLE' },
      { code: 504, uri: `/v1/repositories/${REPO}/room/messages`, template: '/v1/repositories/{repositoryId}/room/messages', method: 'post', expected: 'STORE_UNAVAILABLE' },
      { code: 502, uri: `/v1/repositories/${REPO}/inbox/acknowledgements`, template: '/v1/repositories/{repositoryId}/inbox/acknowledgements', method: 'post', expected: 'STORE_UNAVAILABLE' },
    ];
    for (const c of cases) {
      const answer = await exchange(port, `GET / HTTP/1.1\nHost: errors\nX-Code: ${c.code}\nX-Original-URI: ${c.uri}\nX-Request-ID: req-${c.code}\nConnection: close\n`);
      expectEnvelope(answer, 503, c.expected, `req-${c.code}`);
      expect(answer.headers['retry-after'], c.uri).to.equal('1');
      expect(declaredStatuses(c.template, c.method), c.uri).to.include('503');
    }
  });

  it('answers a request the ingress sent it directly (no ready endpoint) with 503, Retry-After 5 and a fresh ULID, whatever the method, path and body', async () => {
    const body = Buffer.alloc(600 * 1024, 'a');
    const answer = await exchange(
      port,
      `POST /v1/repositories/${REPO}/room/messages HTTP/1.1\nHost: chat.example.com\nAuthorization: Bearer secret-token-value\nContent-Type: application/json\nContent-Length: ${body.length}\nConnection: close\n`,
      body,
    );
    const requestId = expectEnvelope(answer, 503, 'STORE_UNAVAILABLE');
    expect(requestId).to.match(CANONICAL_ULID_PATTERN);
    expect(answer.headers['retry-after']).to.equal('5');
    const stream = await exchange(port, `GET /v1/repositories/${REPO}/room/events HTTP/1.1\nHost: chat.example.com\nAccept: text/event-stream\nConnection: close\n`);
    expectEnvelope(stream, 503, 'STREAM_UNAVAILABLE');
    expect(stream.headers['retry-after']).to.equal('5');
  });

  it('replaces a malformed forwarded request ID with a fresh ULID instead of refusing', async () => {
    const answer = await exchange(port, `GET / HTTP/1.1\nHost: errors\nX-Code: 413\nX-Original-URI: /v1/repositories/${REPO}/inbox\nX-Request-ID: bad id!\nConnection: close\n`);
    expect(expectEnvelope(answer, 400, 'REQUEST_INVALID')).to.match(CANONICAL_ULID_PATTERN);
  });

  it('counts what it answered on /metrics, never logs the bearer token, and stops on SIGTERM', async () => {
    const metrics = await (await fetch(`http://127.0.0.1:${admin}/metrics`)).text();
    expect(metrics).to.match(/chat_ingress_errors_total\{ingress_status="413",status="400"\} 2/);
    expect(metrics).to.match(/chat_ingress_errors_total\{ingress_status="no_endpoint",status="503"\} 2/);
    expect(output).to.include('ingress refusal answered');
    expect(output).not.to.include('secret-token-value');
    expect(output).not.to.include('cursor=abc');
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).to.equal(0);
  });
});
