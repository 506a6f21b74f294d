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

  it('/readyz stays 200 "degraded" while a shared dependency that answered once fails, and 503 until it has answered', async () => {
    let postgresUp = false;
    let ownUp = true;
    admin = await startAdminServer({
      port: 0,
      host: '127.0.0.1',
      registry: new Registry(),
      checkTimeoutMs: 200,
      checks: [
        { name: 'postgres', shared: true, check: () => (postgresUp ? Promise.resolve() : Promise.reject(new Error('down'))) },
        { name: 'listener', check: () => (ownUp ? Promise.resolve() : Promise.reject(new Error('closed'))) },
      ],
    });
    const ready = async () => {
      const answer = await fetch(`${admin!.url}/readyz`);
      return { code: answer.status, ...((await answer.json()) as object) };
    };
    expect(await ready(), 'before postgres ever answered').to.deep.equal({ code: 503, status: 'not_ready', checks: { postgres: 'failed', listener: 'ok' } });
    postgresUp = true;
    expect(await ready()).to.deep.equal({ code: 200, status: 'ready', checks: { postgres: 'ok', listener: 'ok' } });
    postgresUp = false;
    expect(await ready(), 'a shared outage').to.deep.equal({ code: 200, status: 'degraded', checks: { postgres: 'failed', listener: 'ok' } });
    ownUp = false;
    expect(await ready(), 'a check of its own').to.deep.equal({ code: 503, status: 'not_ready', checks: { postgres: 'failed', listener: 'failed' } });
  });

  it('/readyz is 503 while draining, whatever the checks say', async () => {
    admin = await startAdminServer({ port: 0, host: '127.0.0.1', registry: new Registry(), checks: [{ name: 'redis', shared: true, check: () => Promise.resolve() }], isDraining: () => true });
    const answer = await fetch(`${admin.url}/readyz`);
    expect(answer.status).to.equal(503);
    expect(await answer.json()).to.deep.equal({ status: 'not_ready', checks: { draining: 'shutting down' } });
  });
});
