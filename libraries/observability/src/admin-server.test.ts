import { expect } from 'chai';
import { Registry } from 'prom-client';
import { startAdminServer, type AdminServer } from './admin-server.ts';

describe('admin server', () => {
  let admin: AdminServer | undefined;
  afterEach(async () => {
    await admin?.close();
    admin = undefined;
  });

  it('/readyz names the failing dependency without its error text', async () => {
    const secretish = 'connect ECONNREFUSED db.internal:5432 user=chat_admin';
    admin = await startAdminServer({
      port: 0,
      host: '127.0.0.1',
      registry: new Registry(),
      checkTimeoutMs: 200,
      checks: [
        { name: 'postgres', check: () => Promise.reject(new Error(secretish)) },
        { name: 'redis', check: () => Promise.resolve() },
        { name: 'core', check: () => new Promise(() => undefined) },
      ],
    });
    const answer = await fetch(`${admin.url}/readyz`);
    const text = await answer.text();
    expect(answer.status).to.equal(503);
    expect(JSON.parse(text)).to.deep.equal({ status: 'not_ready', checks: { postgres: 'failed', redis: 'ok', core: 'timeout' } });
    expect(text).not.to.contain('ECONNREFUSED');
  });
});
