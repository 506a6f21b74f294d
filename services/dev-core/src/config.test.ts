import { expect } from 'chai';
import { DEFAULT_SERVICE_TOKEN, loadConfig } from './config.ts';

describe('dev-core config', () => {
  it('has documented defaults', () => {
    expect(loadConfig({})).to.deep.equal({
      http: { port: 8081, host: '127.0.0.1', limits: { headersTimeoutMs: 20_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 5_000, maxConnections: 20_000 } },
      fixturePath: undefined,
      keysDir: undefined,
      publicUrl: undefined,
      serviceToken: DEFAULT_SERVICE_TOKEN,
      log: { level: 'info' },
    });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      DEV_CORE_PORT: '0',
      DEV_CORE_HOST: '0.0.0.0',
      DEV_CORE_FIXTURE: '/tmp/f.json',
      DEV_CORE_KEYS_DIR: '/tmp/keys',
      DEV_CORE_PUBLIC_URL: 'http://core.local:9000',
      DEV_CORE_SERVICE_TOKEN: 'x'.repeat(20),
      DEV_CORE_LOG_LEVEL: 'warn',
      HTTP_HEADERS_TIMEOUT_MS: '1000',
    });
    expect(config).to.deep.include({ fixturePath: '/tmp/f.json', keysDir: '/tmp/keys', publicUrl: 'http://core.local:9000', log: { level: 'warn' } });
    expect(config.http).to.deep.include({ port: 0, host: '0.0.0.0' });
    expect(config.http.limits.headersTimeoutMs).to.equal(1000);
  });

  for (const [name, value] of [
    ['DEV_CORE_PORT', '70000'],
    ['DEV_CORE_PORT', 'eighty'],
    ['DEV_CORE_PUBLIC_URL', 'ftp://x'],
    ['DEV_CORE_SERVICE_TOKEN', 'short'],
    ['DEV_CORE_LOG_LEVEL', 'loud'],
  ] as const) {
    it(`fails fast naming ${name}=${value}`, () => {
      expect(() => loadConfig({ [name]: value })).to.throw(name);
    });
  }
});
