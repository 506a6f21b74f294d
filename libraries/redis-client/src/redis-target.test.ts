import { expect } from 'chai';
import { redisTargetOf } from './redis-target.ts';

describe('redisTargetOf', () => {
  it('is undefined without a URL, and the URL itself for one node', () => {
    expect(redisTargetOf({ url: undefined })).to.equal(undefined);
    expect(redisTargetOf({ url: 'redis://r:6379/2', mode: 'single' })).to.equal('redis://r:6379/2');
  });

  it("turns a Cluster's URL and seed nodes into nodes that share the URL's credentials and TLS", () => {
    expect(redisTargetOf({ url: 'rediss://app:s%40cret@a:7000', mode: 'cluster', seedNodes: ['b:7001', 'c:7002'] })).to.deep.equal({
      clusterNodes: [
        { host: 'a', port: 7000 },
        { host: 'b', port: 7001 },
        { host: 'c', port: 7002 },
      ],
      nodeOptions: { username: 'app', password: 's@cret', tls: {} },
    });
  });

  it("follows Sentinel's primary: the URL's host and the seed nodes are sentinels, its database and password the primary's", () => {
    expect(redisTargetOf({ url: 'redis://:pw@s1:26379/3', mode: 'sentinel', seedNodes: ['s2:26379'], sentinelName: 'chat' })).to.deep.equal({
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
      ],
      name: 'chat',
      db: 3,
      password: 'pw',
    });
  });
});
