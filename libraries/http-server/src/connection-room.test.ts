import { once } from 'node:events';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { expect } from 'chai';
import { connectionRoom } from './connection-room.ts';
import { createLimitedServer } from './http-server-limits.ts';

describe('connectionRoom', () => {
  it('rejects while the server holds its limit of connections, and resolves once one closes', async () => {
    const server = createLimitedServer(() => undefined, { headersTimeoutMs: 5000, requestTimeoutMs: 5000, keepAliveTimeoutMs: 1000, maxConnections: 10 });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const sockets: Socket[] = [];
    try {
      const room = connectionRoom(server, 3);
      await room();
      for (let i = 0; i < 3; i++) {
        const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
        sockets.push(socket);
        await once(server, 'connection');
      }
      const refused = await room().then(() => undefined, (err: Error) => err.message);
      expect(refused).to.equal('3 connections open, at or above 3');
      sockets.pop()!.destroy();
      for (let tries = 0; tries < 50 && (await room().then(() => false, () => true)); tries++) await new Promise((r) => setTimeout(r, 10));
      await room();
    } finally {
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
