/**
 * The stream gateway's settings, read from the environment once at start. Nothing else reads `process.env`.
 */
import { parseEnv, port, positiveInt, sharedEnvFields } from '@chat/service-config';
import { z } from 'zod';

export const GatewayEnvSchema = z.object({
  ...sharedEnvFields,
  /** Base URL of the core service. */
  CORE_URL: z.string().url(),
  /** Interval of `heartbeat` events in milliseconds. @defaultValue 15000 */
  GATEWAY_HEARTBEAT_MS: positiveInt.min(100).default(15_000),
  /** Maximum age of a stream before `handoff` (jittered ±20%), in milliseconds. @defaultValue 1800000 */
  GATEWAY_MAX_STREAM_AGE_MS: positiveInt.min(1000).default(1_800_000),
  /** Interval of live authorization rechecks (jittered ±20%), in milliseconds. @defaultValue 60000 */
  GATEWAY_RECHECK_MS: positiveInt.min(100).default(60_000),
  /** A stream closes this many milliseconds before its token expires. @defaultValue 5000 */
  GATEWAY_TOKEN_EXPIRY_MARGIN_MS: z.coerce.number().int().min(0).default(5000),
  /** Events a client may fall behind before its stream is closed. @defaultValue 1000 */
  GATEWAY_QUEUE_MAX_EVENTS: positiveInt.default(1000),
  /** Bytes a client may fall behind before its stream is closed. @defaultValue 1048576 */
  GATEWAY_QUEUE_MAX_BYTES: positiveInt.min(65_536).default(1_048_576),
  /** Streams one principal may hold across all gateways. @defaultValue 16 */
  STREAM_CAP_PER_PRINCIPAL: positiveInt.default(16),
  /** Streams one room may have across all gateways. @defaultValue 2000 */
  STREAM_CAP_PER_ROOM: positiveInt.default(2000),
  /** Inbox streams one principal may hold across all gateways; past it, 503 STREAM_UNAVAILABLE with Retry-After. @defaultValue 64 */
  STREAM_CAP_INBOX_PER_PRINCIPAL: positiveInt.default(64),
  /** Lifetime of a stream-cap lease without renewal (a killed gateway's slots free within it). @defaultValue 30000 */
  STREAM_LEASE_MS: positiveInt.min(1000).default(30_000),
  /** Window over which SIGTERM hands every stream off before exit, in milliseconds. @defaultValue 10000 */
  GATEWAY_DRAIN_MS: z.coerce.number().int().min(0).default(10_000),
  /** Port of the admin server (/healthz, /readyz, /metrics); 0 picks a free one. @defaultValue 9091 */
  GATEWAY_ADMIN_PORT: port.default(9091),
});

export type GatewayEnv = z.infer<typeof GatewayEnvSchema>;

/** Parses the environment; a bad value fails the start with every bad variable named. */
export function loadGatewayConfig(env: NodeJS.ProcessEnv): GatewayEnv {
  return parseEnv(GatewayEnvSchema, env);
}

/** The engine settings of a parsed environment (shared by the standalone gateway and the all-in-one). */
export function engineSettingsOf(env: Pick<GatewayEnv, 'GATEWAY_HEARTBEAT_MS' | 'GATEWAY_MAX_STREAM_AGE_MS' | 'GATEWAY_RECHECK_MS' | 'GATEWAY_TOKEN_EXPIRY_MARGIN_MS' | 'GATEWAY_QUEUE_MAX_EVENTS' | 'GATEWAY_QUEUE_MAX_BYTES'>) {
  return {
    heartbeatMs: env.GATEWAY_HEARTBEAT_MS,
    maxStreamAgeMs: env.GATEWAY_MAX_STREAM_AGE_MS,
    recheckMs: env.GATEWAY_RECHECK_MS,
    tokenExpiryMarginMs: env.GATEWAY_TOKEN_EXPIRY_MARGIN_MS,
    maxEvents: env.GATEWAY_QUEUE_MAX_EVENTS,
    maxBytes: env.GATEWAY_QUEUE_MAX_BYTES,
  };
}

/** The stream caps of a parsed environment. */
export function streamCapsOf(env: Pick<GatewayEnv, 'STREAM_CAP_PER_PRINCIPAL' | 'STREAM_CAP_PER_ROOM' | 'STREAM_CAP_INBOX_PER_PRINCIPAL' | 'STREAM_LEASE_MS'>) {
  return {
    principalCap: env.STREAM_CAP_PER_PRINCIPAL,
    roomCap: env.STREAM_CAP_PER_ROOM,
    inboxPrincipalCap: env.STREAM_CAP_INBOX_PER_PRINCIPAL,
    leaseMs: env.STREAM_LEASE_MS,
  };
}

/** The settings the all-in-one process takes from the gateway's environment. */
export const GatewayEngineEnvSchema = GatewayEnvSchema.pick({
  GATEWAY_HEARTBEAT_MS: true,
  GATEWAY_MAX_STREAM_AGE_MS: true,
  GATEWAY_RECHECK_MS: true,
  GATEWAY_TOKEN_EXPIRY_MARGIN_MS: true,
  GATEWAY_QUEUE_MAX_EVENTS: true,
  GATEWAY_QUEUE_MAX_BYTES: true,
  STREAM_CAP_PER_PRINCIPAL: true,
  STREAM_CAP_PER_ROOM: true,
  STREAM_CAP_INBOX_PER_PRINCIPAL: true,
  STREAM_LEASE_MS: true,
  GATEWAY_DRAIN_MS: true,
});
