import { expect } from 'chai';
import type { StreamLease, StreamLeaseRegistry } from '@chat/stream-caps';
import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { GatewayHarness, roomEventsPath } from '../../test/gateway-harness.ts';
import { eventually } from '../../test/leak-probe.ts';
import { openSse } from '../../test/sse-client.ts';

const PRINCIPAL_CAP = 16;
const ROOM_CAP = 8;
/** The stream-cap key of the harness's `u_bob` (see `principalKey` in scope-grant.ts). */
const BOB = 'user:u_bob';

/** Slots held right now, per cap key, as the gateway takes and gives them back through the registry. */
class SlotCounter {
  readonly held = new Map<string, number>();
  taken = 0;

  constructor(registry: StreamLeaseRegistry) {
    const acquire = registry.acquire.bind(registry);
    registry.acquire = async (input) => {
      const lease = await acquire(input);
      this.taken++;
      const keys = [`p:${input.principalKey}`, `r:${input.roomKey}`];
      for (const key of keys) this.held.set(key, (this.held.get(key) ?? 0) + 1);
      const release = lease.release.bind(lease);
      let released = false;
      const counted: StreamLease = Object.assign(Object.create(lease) as StreamLease, {
        release: () => {
          if (!released) for (const key of keys) this.held.set(key, this.held.get(key)! - 1);
          released = true;
          return release();
        },
      });
      return counted;
    };
  }

  get total(): number {
    let sum = 0;
    for (const count of this.held.values()) sum += count;
    return sum;
  }
}

/**
 * Sends a stream GET and, in the same turn, half-closes and closes: the client is gone before the
 * gateway has authenticated, authorized, read the room or taken the slot.
 */
async function openAndLeave(port: number, path: string, token: string): Promise<void> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  socket.end(`GET ${path} HTTP/1.1\r\nHost: gw\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${token}\r\n\r\n`);
  socket.destroy();
}

describe('a stream whose client leaves while it opens', function () {
  this.timeout(60_000);
  const h = new GatewayHarness({ target: 'postgres+redis', repositories: 20, caps: { principalCap: PRINCIPAL_CAP, roomCap: ROOM_CAP } });
  let slots: SlotCounter;
  const servers: Server[] = [];
  before(async () => {
    await h.start();
    slots = new SlotCounter(h.leases);
  });
  after(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      server.close();
    }
    await h.stop();
  });

  /** Another server on the same gateway, without the stream front: Node's request and response serve every stream. */
  async function nodeServer(listener: RequestListener): Promise<number> {
    const server = createServer(listener);
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as AddressInfo).port;
  }

  const paths: Array<{ name: string; port: () => Promise<number> }> = [
    { name: 'the stream front', port: async () => Number(new URL(h.url).port) },
    { name: 'Node’s server', port: () => nodeServer(h.gateway.pipeline.listener) },
  ];

  for (const { name, port: portOf } of paths) {
    describe(`through ${name}`, () => {
      /** Every open reached its slot, and every slot came back: the counts are 0 with no connection open. */
      async function settled(opens: number, takenBefore: number): Promise<void> {
        await eventually(() => slots.taken - takenBefore === opens, `${opens} opens took their slots`);
        await eventually(() => slots.total === 0, `every slot is released (held: ${JSON.stringify([...slots.held].filter(([, n]) => n > 0))})`);
        expect(h.gateway.hub.stats().sessions, 'sessions').to.equal(0);
      }

      it(`gives back the principal's slots: ${PRINCIPAL_CAP} opens left at once, then a normal open succeeds`, async () => {
        const port = await portOf();
        const token = await h.token('u_bob');
        const rooms = [h.repository(), h.repository(), h.repository()];
        const takenBefore = slots.taken;
        for (let i = 0; i < PRINCIPAL_CAP; i++) await openAndLeave(port, roomEventsPath(rooms[i % rooms.length]!.id), token);
        await settled(PRINCIPAL_CAP, takenBefore);
        expect(slots.held.get(`p:${BOB}`)).to.equal(0);

        const stream = await openSse(`http://127.0.0.1:${port}`, roomEventsPath(h.repository().id), token);
        expect(stream.response.status, JSON.stringify(stream.response.body)).to.equal(200);
        stream.close();
        await eventually(() => slots.total === 0, 'the normal stream’s slot is released');
      });

      it(`gives back the room's slots: ${ROOM_CAP} opens of one room left at once, then a normal open of it succeeds`, async () => {
        const port = await portOf();
        const token = await h.token('u_bob');
        const room = h.repository();
        const takenBefore = slots.taken;
        await Promise.all(Array.from({ length: ROOM_CAP }, () => openAndLeave(port, roomEventsPath(room.id), token)));
        await settled(ROOM_CAP, takenBefore);

        const stream = await openSse(`http://127.0.0.1:${port}`, roomEventsPath(room.id), await h.token('u_carol'));
        expect(stream.response.status, JSON.stringify(stream.response.body)).to.equal(200);
        stream.close();
        await eventually(() => slots.total === 0, 'the normal stream’s slot is released');
      });
    });
  }
});
