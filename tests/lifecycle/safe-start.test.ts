/**
 * Security item 6 on real processes: the standalone services refuse unsafe settings outside
 * development mode and placeholders of the Secret template in any mode, and their public and admin servers close a client that never finishes its headers.
 */
import { once } from 'node:events';
import { connect } from 'node:net';
import { expect } from 'chai';
import { ChildService } from '../harness/child-service.ts';
import { startLifecycleWorld, type LifecycleWorld } from './service-processes.ts';

const SERVICES = {
  api: 'services/api/src/main.ts',
  gateway: 'services/stream-gateway/src/main.ts',
  notifier: 'services/notifier/src/main.ts',
} as const;

/** Runs a service with `env` and resolves with its exit code and output once it exits. */
async function runToExit(name: string, script: string, env: Record<string, string>): Promise<{ code: number | null; log: string }> {
  const child = new ChildService({ name, script, env });
  const exited = once(child.process, 'exit') as Promise<[number | null]>;
  const timer = setTimeout(() => child.process.kill('SIGKILL'), 30_000);
  const [code] = await exited;
  clearTimeout(timer);
  // 'close' follows the last output chunk.
  if (child.process.stdout && !child.process.stdout.readableEnded) await once(child.process, 'close').catch(() => undefined);
  return { code, log: child.log };
}

/** Opens a socket, sends half a request's headers, and resolves with what came back once the server closed it. */
async function slowHeaders(url: string): Promise<{ closedAfterMs: number; answer: string }> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  socket.write('GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\nX-Slow: ');
  const started = Date.now();
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
  socket.on('error', () => undefined);
  await once(socket, 'close');
  return { closedAfterMs: Date.now() - started, answer };
}

describe('lifecycle: safe defaults outside development mode (security item 6)', function () {
  this.timeout(120_000);

  const base = {
    DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test',
    REDIS_URL: 'redis://127.0.0.1:6379',
    LOG_LEVEL: 'warn',
  };

  for (const [name, script] of Object.entries(SERVICES)) {
    it(`${name}: refuses the public development service token, naming CORE_SERVICE_TOKEN`, async () => {
      const { code, log } = await runToExit(`${name}-dev-token`, script, { ...base, CORE_URL: 'https://core.example' });
      expect(code, log).to.equal(2);
      expect(log).to.match(/CORE_SERVICE_TOKEN: the public development token is refused/);
      expect(log).to.contain('CHAT_DEVELOPMENT_MODE');
    });

    it(`${name}: refuses a plain-http CORE_URL off loopback, naming CORE_URL`, async () => {
      const { code, log } = await runToExit(`${name}-plain-core`, script, { ...base, CORE_URL: 'http://core.example:8080', CORE_SERVICE_TOKEN: 'a-real-service-credential-0123456789' });
      expect(code, log).to.equal(2);
      expect(log).to.match(/CORE_URL: plain http to a non-loopback host \(core\.example\)/);
      expect(log).not.to.contain('CORE_SERVICE_TOKEN:');
    });
  }

  for (const [name, script] of Object.entries(SERVICES)) {
    it(`${name}: refuses a placeholder left from the Secret template, naming the variable and not its value`, async () => {
      const { code, log } = await runToExit(`${name}-placeholder`, script, {
        ...base,
        CORE_URL: 'https://core.example',
        CORE_SERVICE_TOKEN: 'REPLACE_ME_core_service_token',
        // Passes the 32-character check: only the placeholder refusal stops it.
        CURSOR_SECRET: 'REPLACE_ME_with_at_least_32_random_characters',
        // Development mode allows the public development token, never a placeholder.
        CHAT_DEVELOPMENT_MODE: 'true',
      });
      expect(code, log).to.equal(2);
      expect(log).to.match(/CORE_SERVICE_TOKEN: holds a placeholder of the Secret template \(REPLACE_ME\)/);
      expect(log).not.to.contain('REPLACE_ME_core_service_token');
      if (name !== 'notifier') expect(log).to.match(/CURSOR_SECRET: holds a placeholder/);
    });
  }

  describe('with development mode set, against dev-core', () => {
    let world: LifecycleWorld;
    before(async () => {
      world = await startLifecycleWorld();
    });
    after(async () => world?.stop());

    it('the API and the gateway start, and their public and admin servers close a client that never finishes its headers', async () => {
      const limits = { HTTP_HEADERS_TIMEOUT_MS: '500', HTTP_REQUEST_TIMEOUT_MS: '2000' };
      const api = await world.startApi('api-slow-headers', limits);
      const gateway = await world.startGateway('gateway-slow-headers', limits);
      for (const url of [api.url, gateway.url]) {
        const { closedAfterMs, answer } = await slowHeaders(url);
        expect(closedAfterMs, url).to.be.below(10_000);
        expect(answer, url).to.match(/^HTTP\/1\.1 408/);
      }
      // The admin servers use the defaults (20 s); they close such a socket too, within them.
      const admin = await slowHeaders(api.adminUrl);
      expect(admin.answer).to.match(/^HTTP\/1\.1 408/);
    });
  });
});
