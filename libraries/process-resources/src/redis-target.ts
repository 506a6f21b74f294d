import type { RedisTarget } from '@chat/redis-client';
import type { RedisConfig } from '@chat/service-config';

/**
 * What the backbone and the stream leases connect to, from the validated Redis settings: the URL
 * itself for one node; for a Cluster, the URL's node and the seed nodes, every node with the URL's
 * credentials and TLS; for Sentinel, the URL's host and the seed nodes as sentinels, the URL's
 * credentials and database for the primary they name. undefined: no Redis.
 */
export function redisTargetOf(config: RedisConfig): RedisTarget | undefined {
  if (config.url === undefined) return undefined;
  const mode = config.mode ?? 'single';
  if (mode === 'single') return config.url;
  const url = new URL(config.url);
  const nodes = [{ host: url.hostname, port: Number(url.port || 6379) }, ...(config.seedNodes ?? []).map(hostPort)];
  const credentials = {
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  };
  if (mode === 'cluster') return { clusterNodes: nodes, nodeOptions: credentials };
  const db = Number(url.pathname.slice(1) || 0);
  return { sentinels: nodes, name: config.sentinelName ?? 'mymaster', db, ...credentials };
}

function hostPort(value: string): { host: string; port: number } {
  const colon = value.lastIndexOf(':');
  return { host: value.slice(0, colon), port: Number(value.slice(colon + 1)) };
}
