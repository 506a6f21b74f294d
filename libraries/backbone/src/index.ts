export * from './backbone.ts';
export { partitionOf, fnv1a32 } from './partition.ts';
export { compareEntryIds } from './entry-id.ts';
export { StreamKeys } from './redis/stream-keys.ts';
export { RedisStreamsBackbone, type RedisStreamsBackboneOptions } from './redis/redis-streams-backbone.ts';
export { InProcessBackbone } from './in-process/in-process-backbone.ts';
