import { expect } from 'chai';
import { runLeaseRegistryContract, fresh } from '../../test/lease-registry-contract.ts';
import { InProcessStreamLeaseRegistry } from './in-process-stream-lease-registry.ts';

runLeaseRegistryContract('InProcessStreamLeaseRegistry', async (options) => new InProcessStreamLeaseRegistry(options));

describe('InProcessStreamLeaseRegistry (specifics)', () => {
  it('refuses caps that are not positive whole numbers at construction', () => {
    expect(() => new InProcessStreamLeaseRegistry({ principalCap: 0 })).to.throw(RangeError);
    expect(() => new InProcessStreamLeaseRegistry({ leaseMs: 0.5 })).to.throw(RangeError);
  });

  it('frees every slot it held on close, so a later registry starts empty', async () => {
    const registry = new InProcessStreamLeaseRegistry({ principalCap: 1, roomCap: 1 });
    const principal = fresh('p');
    await registry.acquire({ principalKey: principal, roomKey: fresh('r') });
    await registry.close();
    const next = new InProcessStreamLeaseRegistry({ principalCap: 1, roomCap: 1 });
    await next.acquire({ principalKey: principal, roomKey: fresh('r') });
    await next.close();
  });
});
