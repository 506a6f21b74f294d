import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { ApiClient } from './api-client.ts';

const ANSWER = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n{}';

describe('harness ApiClient', () => {
  it('sends a request again when the server closed its kept-alive socket as the request went out, and only then', async () => {
    // Each connection answers its first request and resets when a second one arrives on it: the
    // race of a server's keep-alive time running out just as a pooled socket is reused.
    let connections = 0;
    let requests = 0;
    const server = createServer((socket: Socket) => {
      connections += 1;
      let answered = false;
      socket.on('error', () => undefined);
      socket.on('data', (chunk) => {
        if (!chunk.includes('\r\n\r\n')) return;
        requests += 1;
        if (answered) socket.resetAndDestroy();
        else {
          answered = true;
          socket.write(ANSWER);
        }
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const client = new ApiClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      expect((await client.send({ method: 'GET', path: '/one' }, { validate: false })).status).to.equal(200);
      expect((await client.send({ method: 'GET', path: '/two' }, { validate: false })).status).to.equal(200);
      expect({ connections, requests }).to.deep.equal({ connections: 2, requests: 3 });
    } finally {
      client.close();
      server.close();
    }
  });

  it('does not send again when a fresh socket is reset', async () => {
    const server = createServer((socket: Socket) => {
      socket.on('error', () => undefined);
      socket.on('data', () => socket.resetAndDestroy());
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const client = new ApiClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      const failure = await client.send({ method: 'GET', path: '/one' }, { validate: false }).then(
        () => undefined,
        (error: NodeJS.ErrnoException) => error,
      );
      expect(failure?.code).to.equal('ECONNRESET');
    } finally {
      client.close();
      server.close();
    }
  });
});
