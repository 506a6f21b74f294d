export type { StreamCapOptions, StreamLease, StreamLeaseRegistry } from './leases/stream-lease-registry.ts';
export { StreamLeaseLostError } from './leases/stream-lease-lost-error.ts';
export { InProcessStreamLeaseRegistry } from './leases/in-process-stream-lease-registry.ts';
export { RedisStreamLeaseRegistry, type RedisStreamLeaseRegistryOptions } from './leases/redis-stream-lease-registry.ts';
export type { RedisTargetOrClient } from './redis/redis-handle.ts';
export { createStreamLeaseRegistry } from './leases/create-stream-lease-registry.ts';
