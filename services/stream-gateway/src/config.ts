/**
 * The stream gateway's settings, read from the environment once at start and handed on as one
 * typed, nested object. Nothing else reads `process.env`.
 */
import {
  loadConfig,
  port,
  positiveInt,
  sharedEnvFields,
  standaloneServiceConfigOf,
  tracingConfigOf,
  tracingFields,
  type StandaloneServiceConfig,
  type TracingConfig,
} from '@chat/service-config';
import { z } from 'zod';
import type { StreamEngineSettings } from './settings.ts';

/** The gateway's own variables, spread into the standalone gateway's and the all-in-one's schemas. */
export const gatewayEnvFields = {
  GATEWAY_HEARTBEAT_MS: positiveInt.min(100).default(15_000).describe('interval of `heartbeat` events'),
  GATEWAY_MAX_STREAM_AGE_MS: positiveInt.min(1000).default(1_800_000).describe("a stream's age (jittered ±20%) at which it gets `handoff` and closes"),
  GATEWAY_RECHECK_MS: positiveInt.min(100).default(60_000).describe('interval (jittered ±20%) of live authorization rechecks; denial or outage sends `reauthorize`'),
  GATEWAY_TOKEN_EXPIRY_MARGIN_MS: z.coerce.number().int().min(0).default(5000).describe('a stream closes (with `reauthorize`) this long before its token expires'),
  GATEWAY_QUEUE_MAX_EVENTS: positiveInt.default(1000).describe('events a client may fall behind before its stream is closed (it resumes from its last id)'),
  GATEWAY_QUEUE_MAX_BYTES: positiveInt.min(65_536).default(1_048_576).describe('bytes a client may fall behind before its stream is closed'),
  STREAM_CAP_PER_PRINCIPAL: positiveInt.default(16).describe('room streams one principal may hold across all gateways (429 `STREAM_PRINCIPAL_LIMIT`)'),
  STREAM_CAP_PER_ROOM: positiveInt.default(2000).describe('streams one room may have across all gateways (429 `STREAM_ROOM_LIMIT`)'),
  STREAM_CAP_INBOX_PER_PRINCIPAL: positiveInt.default(64).describe('inbox streams one principal may hold across all gateways and repositories (past it: 503 `STREAM_UNAVAILABLE` with `Retry-After`)'),
  STREAM_LEASE_MS: positiveInt.min(1000).default(30_000).describe("lease of a stream slot; a killed gateway's slots free within it"),
  GATEWAY_STREAM_OPENS_PER_SECOND: positiveInt.default(1000).describe('stream opens one process admits per second; past it: 503 `STREAM_UNAVAILABLE` with a jittered `Retry-After` (docs/operations.md, reconnect storm)'),
  GATEWAY_STREAM_OPEN_BURST: positiveInt.default(2000).describe('stream opens one process admits at once after a quiet spell'),
  GATEWAY_DRAIN_MS: z.coerce.number().int().min(0).default(10_000).describe('window over which SIGTERM hands every stream off before exit'),
};

export const GatewayEnvSchema = z.object({
  ...sharedEnvFields,
  ...gatewayEnvFields,
  ...tracingFields,
  GATEWAY_ADMIN_PORT: port.default(9091).describe('admin server port (`/healthz`, `/readyz`, `/metrics`); 0 picks a free one'),
});

type ParsedGatewayFields = z.output<z.ZodObject<typeof gatewayEnvFields>>;

/** Stream caps, enforced across gateways through leases. */
export interface StreamCapsConfig {
  principalCap: number;
  roomCap: number;
  /** Inbox streams per principal, counted apart from room streams. */
  inboxPrincipalCap: number;
  leaseMs: number;
}

/** What the gateway itself (not the process resources under it) is tuned by. */
export interface GatewayServiceConfig {
  engine: Partial<StreamEngineSettings>;
  caps: StreamCapsConfig;
  drainMs: number;
}

export const gatewayServiceConfigOf = (e: ParsedGatewayFields): GatewayServiceConfig => ({
  engine: {
    heartbeatMs: e.GATEWAY_HEARTBEAT_MS,
    maxStreamAgeMs: e.GATEWAY_MAX_STREAM_AGE_MS,
    recheckMs: e.GATEWAY_RECHECK_MS,
    tokenExpiryMarginMs: e.GATEWAY_TOKEN_EXPIRY_MARGIN_MS,
    maxEvents: e.GATEWAY_QUEUE_MAX_EVENTS,
    maxBytes: e.GATEWAY_QUEUE_MAX_BYTES,
    opensPerSecond: e.GATEWAY_STREAM_OPENS_PER_SECOND,
    openBurst: e.GATEWAY_STREAM_OPEN_BURST,
  },
  caps: {
    principalCap: e.STREAM_CAP_PER_PRINCIPAL,
    roomCap: e.STREAM_CAP_PER_ROOM,
    inboxPrincipalCap: e.STREAM_CAP_INBOX_PER_PRINCIPAL,
    leaseMs: e.STREAM_LEASE_MS,
  },
  drainMs: e.GATEWAY_DRAIN_MS,
});

/** The standalone gateway's configuration. */
export interface GatewayConfig extends StandaloneServiceConfig {
  gateway: GatewayServiceConfig;
  /** Off unless an OTLP endpoint is set. */
  tracing: TracingConfig;
}

/** Parses the environment; a bad value, or an unsafe one outside development mode, fails the start naming it. */
export function loadGatewayConfig(env: NodeJS.ProcessEnv): GatewayConfig {
  return loadConfig(GatewayEnvSchema, env, (e) => ({
    ...standaloneServiceConfigOf(e, e.GATEWAY_ADMIN_PORT),
    gateway: gatewayServiceConfigOf(e),
    tracing: tracingConfigOf(e, 'chat-stream-gateway'),
  }));
}
