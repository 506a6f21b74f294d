/**
 * A simulated gateway for the killed-gateway tests: takes `count` stream slots for one principal in
 * one room (or `count` inbox stream slots when roomKey is `inbox`), reports their ids as one JSON
 * line, then keeps renewing until it is killed.
 * Usage: hold-stream-leases.ts <redisUrl | Cluster target as JSON> <prefix> <principalKey> <roomKey | inbox> <count> <leaseMs>
 */
import type { RedisClusterTarget } from '@chat/redis-client';
import { RedisStreamLeaseRegistry } from '../src/index.ts';

const [redisUrl, keyPrefix, principalKey, roomKey, count, leaseMs] = process.argv.slice(2);
if (leaseMs === undefined) throw new Error('usage: hold-stream-leases.ts <redisUrl> <prefix> <principalKey> <roomKey | inbox> <count> <leaseMs>');

const registry = new RedisStreamLeaseRegistry({
  redis: redisUrl!.startsWith('{') ? (JSON.parse(redisUrl!) as RedisClusterTarget) : (redisUrl as string),
  keyPrefix,
  leaseMs: Number(leaseMs),
  principalCap: Number(count),
  roomCap: Number(count),
  inboxPrincipalCap: Number(count),
});
const ids: string[] = [];
for (let i = 0; i < Number(count); i += 1) {
  const lease =
    roomKey === 'inbox'
      ? await registry.acquireInbox({ principalKey: principalKey as string })
      : await registry.acquire({ principalKey: principalKey as string, roomKey: roomKey as string });
  ids.push(lease.id);
}
process.stdout.write(`${JSON.stringify({ ids })}\n`);
// The registry's renewal timer does not hold the process open; this stands in for a gateway's server.
setInterval(() => undefined, 60_000);
