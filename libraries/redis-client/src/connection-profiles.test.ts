import { expect } from 'chai';
import { tuningOf } from './connection-profiles.ts';

describe('connection profiles', () => {
  it("tunes the backbone's command connection to fail fast, with no command timeout and nothing re-sent", () => {
    expect(tuningOf('backbone', 2000)).to.deep.equal({ connectTimeoutMs: 2000, maxRetriesPerRequest: 1, resendAfterReconnect: false, offlineQueue: true, slotsRefreshIntervalMs: 10_000 });
  });

  it('fails a blocking reader at once while disconnected, and re-reads its slot map rarely', () => {
    expect(tuningOf('backbone-blocking', 2000)).to.deep.equal({ connectTimeoutMs: 2000, maxRetriesPerRequest: 0, resendAfterReconnect: false, offlineQueue: false, slotsRefreshIntervalMs: 60_000 });
  });

  it("bounds the leases' commands by their timeout, pipelines them, and gives connecting at least 500 ms", () => {
    const tuning = { maxRetriesPerRequest: 1, offlineQueue: true, autoPipelining: true, slotsRefreshIntervalMs: 10_000 };
    expect(tuningOf('stream-leases', 1000)).to.deep.equal({ connectTimeoutMs: 1000, commandTimeoutMs: 1000, ...tuning });
    expect(tuningOf('stream-leases', 200)).to.deep.equal({ connectTimeoutMs: 500, commandTimeoutMs: 200, ...tuning });
  });
});
