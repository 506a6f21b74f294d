import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createHttpEntry, type FastRoute } from './http-entry.ts';

describe('HTTP entry point', () => {
  it('serves a matching fast route, and sends other methods, paths and refused requests to the fallback', async () => {
    const routes: FastRoute[] = [
      {
        method: 'GET',
        pattern: /^\/things\/(?<id>[0-9]+)$/,
        path: '/things/:id',
        accepts: (req) => req.headers['x-slow'] === undefined,
        serve: (_req, res, match) => res.end(`fast ${match.params.id} ${match.query}`),
      },
    ];
    const server = createServer(createHttpEntry(routes, (req, res) => res.end(`fallback ${req.method} ${req.url}`))).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const text = async (path: string, init?: RequestInit) => (await fetch(base + path, init)).text();
      expect(await text('/things/7?x=1')).to.equal('fast 7 x=1');
      expect(await text('/things/7', { method: 'POST' })).to.equal('fallback POST /things/7');
      expect(await text('/things/abc')).to.equal('fallback GET /things/abc');
      expect(await text('/things/7', { headers: { 'x-slow': '1' } })).to.equal('fallback GET /things/7');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
