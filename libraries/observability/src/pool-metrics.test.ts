import { expect } from 'chai';
import { Registry } from 'prom-client';
import { registerPoolMetrics, type PoolOccupancy } from './pool-metrics.ts';

describe('pool metrics', () => {
  it("reads the pool's occupancy at each scrape", async () => {
    const registry = new Registry();
    let now: PoolOccupancy | undefined = { max: 10, inUse: 7, idle: 3, waiting: 0 };
    registerPoolMetrics(registry, () => now);
    const first = await registry.metrics();
    expect(first).to.include('chat_db_pool_connections{state="in_use"} 7').and.include('chat_db_pool_connections{state="idle"} 3');
    expect(first).to.include('chat_db_pool_max_connections 10').and.include('chat_db_pool_waiting_requests 0');
    now = { max: 10, inUse: 10, idle: 0, waiting: 4 };
    const second = await registry.metrics();
    expect(second).to.include('chat_db_pool_connections{state="in_use"} 10').and.include('chat_db_pool_waiting_requests 4');
    now = undefined;
    expect(await registry.metrics()).to.include('chat_db_pool_max_connections 10');
  });
});
