import { expect } from 'chai';
import { loadGatewayConfig } from './config.ts';

/** The least a standalone gateway needs, in development mode. */
const BASE = { CHAT_DEVELOPMENT_MODE: 'true', CORE_URL: 'http://127.0.0.1:8081', DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' };

describe('stream gateway config: the stream-open rate', () => {
  it('defaults to 1000 opens a second after a burst of 2000, handed to the engine', () => {
    expect(loadGatewayConfig(BASE).gateway.engine).to.include({ opensPerSecond: 1000, openBurst: 2000 });
  });

  it('reads GATEWAY_STREAM_OPENS_PER_SECOND and GATEWAY_STREAM_OPEN_BURST', () => {
    const config = loadGatewayConfig({ ...BASE, GATEWAY_STREAM_OPENS_PER_SECOND: '50', GATEWAY_STREAM_OPEN_BURST: '120' });
    expect(config.gateway.engine).to.include({ opensPerSecond: 50, openBurst: 120 });
  });

  for (const [name, value] of [
    ['GATEWAY_STREAM_OPENS_PER_SECOND', '0'],
    ['GATEWAY_STREAM_OPENS_PER_SECOND', '2.5'],
    ['GATEWAY_STREAM_OPENS_PER_SECOND', 'fast'],
    ['GATEWAY_STREAM_OPEN_BURST', '-1'],
  ] as const) {
    it(`fails at start naming ${name}=${value}`, () => {
      expect(() => loadGatewayConfig({ ...BASE, [name]: value })).to.throw(name);
    });
  }
});
