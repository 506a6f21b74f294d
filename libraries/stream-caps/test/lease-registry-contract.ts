import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { AppError } from '@chat/contracts';
import type { StreamCapOptions, StreamLease, StreamLeaseRegistry } from '../src/leases/stream-lease-registry.ts';

/** Opens a registry on a store fresh for the current test; the contract closes it afterwards. */
type OpenRegistry = (options: StreamCapOptions) => Promise<StreamLeaseRegistry>;

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Acquires and returns the lease, or the AppError that refused it. */
export async function tryAcquire(
  registry: StreamLeaseRegistry,
  principalKey: string,
  roomKey: string,
): Promise<StreamLease | AppError> {
  try {
    return await registry.acquire({ principalKey, roomKey });
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
}

/** Acquires and returns an inbox lease, or the AppError that refused it. */
export async function tryAcquireInbox(registry: StreamLeaseRegistry, principalKey: string): Promise<StreamLease | AppError> {
  try {
    return await registry.acquireInbox({ principalKey });
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
}

export function fresh(kind: string): string {
  return `${kind}-${randomUUID()}`;
}

/** The behaviour every {@link StreamLeaseRegistry} must show, run against each implementation. */
export function runLeaseRegistryContract(name: string, open: OpenRegistry): void {
  describe(`${name} (stream lease registry contract)`, () => {
    const opened: StreamLeaseRegistry[] = [];
    const registryWith = async (options: StreamCapOptions): Promise<StreamLeaseRegistry> => {
      const registry = await open(options);
      opened.push(registry);
      return registry;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((r) => r.close()));
    });

    it('refuses a principal past its cap with 429 STREAM_PRINCIPAL_LIMIT and the configured Retry-After', async () => {
      const registry = await registryWith({ principalCap: 2, roomCap: 100, retryAfterSeconds: 7 });
      const principal = fresh('p');
      await registry.acquire({ principalKey: principal, roomKey: fresh('r') });
      await registry.acquire({ principalKey: principal, roomKey: fresh('r') });
      const refused = await tryAcquire(registry, principal, fresh('r'));
      expect(refused).to.be.instanceOf(AppError);
      expect((refused as AppError).code).to.equal('STREAM_PRINCIPAL_LIMIT');
      expect((refused as AppError).status).to.equal(429);
      expect((refused as AppError).retryAfterSeconds).to.equal(7);
      expect(await tryAcquire(registry, fresh('p'), fresh('r'))).not.to.be.instanceOf(AppError);
    });

    it('refuses a room past its cap with 429 STREAM_ROOM_LIMIT and keeps no principal slot for the refused stream', async () => {
      const registry = await registryWith({ principalCap: 2, roomCap: 1, retryAfterSeconds: 3 });
      const room = fresh('r');
      await registry.acquire({ principalKey: fresh('p'), roomKey: room });
      const principal = fresh('p');
      for (let i = 0; i < 5; i += 1) {
        const refused = await tryAcquire(registry, principal, room);
        expect((refused as AppError).code).to.equal('STREAM_ROOM_LIMIT');
        expect((refused as AppError).retryAfterSeconds).to.equal(3);
      }
      // Had the refusals kept principal slots, this principal would now be at its cap.
      expect(await tryAcquire(registry, principal, fresh('r'))).not.to.be.instanceOf(AppError);
      expect(await tryAcquire(registry, principal, fresh('r'))).not.to.be.instanceOf(AppError);
    });

    it('frees a slot on release, and a second release changes nothing', async () => {
      const registry = await registryWith({ principalCap: 1, roomCap: 1 });
      const principal = fresh('p');
      const room = fresh('r');
      const lease = await registry.acquire({ principalKey: principal, roomKey: room });
      expect(await tryAcquire(registry, principal, room)).to.be.instanceOf(AppError);
      await lease.release();
      await lease.release();
      const again = await registry.acquire({ principalKey: principal, roomKey: room });
      expect(again.id).not.to.equal(lease.id);
      expect(await tryAcquire(registry, principal, room)).to.be.instanceOf(AppError);
    });

    it('lets exactly the cap through when 50 acquires for one principal race', async () => {
      const registry = await registryWith({ principalCap: 5, roomCap: 1000 });
      const principal = fresh('p');
      const outcomes = await Promise.all(Array.from({ length: 50 }, () => tryAcquire(registry, principal, fresh('r'))));
      expect(outcomes.filter((o) => !(o instanceof AppError))).to.have.length(5);
      expect(outcomes.filter((o) => o instanceof AppError && o.code === 'STREAM_PRINCIPAL_LIMIT')).to.have.length(45);
    });

    it('lets exactly the cap through when 50 principals race for one room', async () => {
      const registry = await registryWith({ principalCap: 16, roomCap: 5 });
      const room = fresh('r');
      const outcomes = await Promise.all(Array.from({ length: 50 }, () => tryAcquire(registry, fresh('p'), room)));
      expect(outcomes.filter((o) => !(o instanceof AppError))).to.have.length(5);
      expect(outcomes.filter((o) => o instanceof AppError && o.code === 'STREAM_ROOM_LIMIT')).to.have.length(45);
    });

    it('keeps held leases past leaseMs by renewing them, room and inbox alike', async function () {
      this.timeout(10_000);
      const registry = await registryWith({ principalCap: 1, roomCap: 1, inboxPrincipalCap: 1, leaseMs: 600 });
      const principal = fresh('p');
      const room = fresh('r');
      const lease = await registry.acquire({ principalKey: principal, roomKey: room });
      const inbox = await registry.acquireInbox({ principalKey: principal });
      await sleep(1_800);
      expect(((await tryAcquire(registry, principal, fresh('r'))) as AppError).code).to.equal('STREAM_PRINCIPAL_LIMIT');
      expect(((await tryAcquire(registry, fresh('p'), room)) as AppError).code).to.equal('STREAM_ROOM_LIMIT');
      expect(((await tryAcquireInbox(registry, principal)) as AppError).code).to.equal('STREAM_UNAVAILABLE');
      await lease.release();
      await inbox.release();
      expect(await tryAcquire(registry, principal, room)).not.to.be.instanceOf(AppError);
      expect(await tryAcquireInbox(registry, principal)).not.to.be.instanceOf(AppError);
    });

    it('refuses new streams with 503 STREAM_UNAVAILABLE once closed, and releasing afterwards is harmless', async () => {
      const registry = await registryWith({});
      const lease = await registry.acquire({ principalKey: fresh('p'), roomKey: fresh('r') });
      await registry.close();
      const refused = await tryAcquire(registry, fresh('p'), fresh('r'));
      expect((refused as AppError).code).to.equal('STREAM_UNAVAILABLE');
      expect((refused as AppError).status).to.equal(503);
      await lease.release();
    });

    it('uses the documented defaults: 16 streams per principal, Retry-After 5 behind live leases', async () => {
      const registry = await registryWith({});
      const principal = fresh('p');
      for (let i = 0; i < 16; i += 1) await registry.acquire({ principalKey: principal, roomKey: fresh('r') });
      const refused = (await tryAcquire(registry, principal, fresh('r'))) as AppError;
      expect(refused.code).to.equal('STREAM_PRINCIPAL_LIMIT');
      expect(refused.retryAfterSeconds).to.equal(5);
    });

    it('uses the documented inbox default: 64 inbox streams per principal, Retry-After 5 behind live leases', async () => {
      const registry = await registryWith({});
      const principal = fresh('p');
      for (let i = 0; i < 64; i += 1) await registry.acquireInbox({ principalKey: principal });
      const refused = (await tryAcquireInbox(registry, principal)) as AppError;
      expect(refused.code).to.equal('STREAM_UNAVAILABLE');
      expect(refused.retryAfterSeconds).to.equal(5);
    });

    it('refuses an inbox stream past the inbox cap with 503 STREAM_UNAVAILABLE and the configured Retry-After, per principal', async () => {
      const registry = await registryWith({ inboxPrincipalCap: 2, retryAfterSeconds: 4 });
      const principal = fresh('p');
      await registry.acquireInbox({ principalKey: principal });
      await registry.acquireInbox({ principalKey: principal });
      for (let i = 0; i < 3; i += 1) {
        const refused = await tryAcquireInbox(registry, principal);
        expect(refused).to.be.instanceOf(AppError);
        expect((refused as AppError).code).to.equal('STREAM_UNAVAILABLE');
        expect((refused as AppError).status).to.equal(503);
        expect((refused as AppError).retryAfterSeconds).to.equal(4);
        expect((refused as AppError).message).to.match(/inbox streams/);
      }
      expect(await tryAcquireInbox(registry, fresh('p'))).not.to.be.instanceOf(AppError);
    });

    it('counts inbox streams apart from room streams: neither cap takes the other\'s slots', async () => {
      const registry = await registryWith({ principalCap: 1, roomCap: 1, inboxPrincipalCap: 1 });
      const principal = fresh('p');
      const room = await registry.acquire({ principalKey: principal, roomKey: fresh('r') });
      const inbox = await registry.acquireInbox({ principalKey: principal });
      expect(((await tryAcquire(registry, principal, fresh('r'))) as AppError).code).to.equal('STREAM_PRINCIPAL_LIMIT');
      expect(((await tryAcquireInbox(registry, principal)) as AppError).code).to.equal('STREAM_UNAVAILABLE');
      await inbox.release();
      expect(((await tryAcquire(registry, principal, fresh('r'))) as AppError).code).to.equal('STREAM_PRINCIPAL_LIMIT');
      const again = await registry.acquireInbox({ principalKey: principal });
      await room.release();
      expect(((await tryAcquireInbox(registry, principal)) as AppError).code).to.equal('STREAM_UNAVAILABLE');
      expect(await tryAcquire(registry, principal, fresh('r'))).not.to.be.instanceOf(AppError);
      await again.release();
    });

    it('frees an inbox slot on release, and a second release changes nothing', async () => {
      const registry = await registryWith({ inboxPrincipalCap: 1 });
      const principal = fresh('p');
      const lease = await registry.acquireInbox({ principalKey: principal });
      expect(await tryAcquireInbox(registry, principal)).to.be.instanceOf(AppError);
      await lease.release();
      await lease.release();
      const again = await registry.acquireInbox({ principalKey: principal });
      expect(again.id).not.to.equal(lease.id);
      expect(await tryAcquireInbox(registry, principal)).to.be.instanceOf(AppError);
    });

    it('lets exactly the inbox cap through when 50 inbox acquires for one principal race', async () => {
      const registry = await registryWith({ inboxPrincipalCap: 5 });
      const principal = fresh('p');
      const outcomes = await Promise.all(Array.from({ length: 50 }, () => tryAcquireInbox(registry, principal)));
      expect(outcomes.filter((o) => !(o instanceof AppError))).to.have.length(5);
      expect(outcomes.filter((o) => o instanceof AppError && o.code === 'STREAM_UNAVAILABLE')).to.have.length(45);
    });

    it('refuses inbox streams with 503 STREAM_UNAVAILABLE once closed, and releasing afterwards is harmless', async () => {
      const registry = await registryWith({});
      const lease = await registry.acquireInbox({ principalKey: fresh('p') });
      await registry.close();
      const refused = await tryAcquireInbox(registry, fresh('p'));
      expect((refused as AppError).code).to.equal('STREAM_UNAVAILABLE');
      expect((refused as AppError).status).to.equal(503);
      await lease.release();
    });
  });
}
