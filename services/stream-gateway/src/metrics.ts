import { createCoreCallHistogram, createHttpDurationHistogram } from '@chat/observability';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { StreamHub } from './domain/stream-hub.ts';
import type { CloseReason } from './domain/stream-session.ts';

/** The kind of stream, named by its durable event: room streams send `message`, inbox streams `notification`. */
export type StreamKind = 'message' | 'notification';

/** The gateway's own prom-client registry and the instruments the engine records into. */
export interface GatewayMetrics {
  registry: Registry;
  httpDuration: ReturnType<typeof createHttpDurationHistogram>;
  coreCalls: Histogram<'operation' | 'outcome'>;
  streamOpened(kind: StreamKind): void;
  streamClosed(kind: StreamKind, reason: CloseReason): void;
  delivered(kind: StreamKind, from: 'store' | 'live'): void;
  /** A stream open refused by the process's open rate before it cost anything. */
  openThrottled(): void;
}

/**
 * Creates the registry; open streams and scopes are read from the hub at scrape time. Close reasons
 * carry handoffs (`rotation`, `shutdown`), reauthorizations (`access_revoked`,
 * `authorization_unavailable`, `token_expiring`) and slow-consumer closes (`slow_consumer`).
 */
export function createGatewayMetrics(hub: () => StreamHub | undefined, options: { defaultMetrics?: boolean } = {}): GatewayMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'chat_gateway_' });
  const opened = new Counter({ name: 'chat_gateway_streams_opened_total', help: 'Streams opened, by kind.', labelNames: ['kind'], registers: [registry] });
  const closed = new Counter({
    name: 'chat_gateway_streams_closed_total',
    help: 'Streams closed, by kind and reason (rotation/shutdown: handoff; access_revoked/authorization_unavailable/token_expiring: reauthorize; slow_consumer).',
    labelNames: ['kind', 'reason'],
    registers: [registry],
  });
  const throttled = new Counter({
    name: 'chat_gateway_stream_opens_throttled_total',
    help: "Stream opens refused by this process's open rate (GATEWAY_STREAM_OPENS_PER_SECOND) with 503 and Retry-After.",
    registers: [registry],
  });
  // Counted in plain numbers and handed to the counter at scrape time: a room event is one delivery
  // per stream, and prom-client's labelled `inc` (label hashing and validation) on each of them was a
  // visible share of the fanout's CPU.
  const unreported = new Map<string, { labels: { kind: StreamKind; from: 'store' | 'live' }; count: number }>();
  new Counter({
    name: 'chat_gateway_deliveries_total',
    help: 'Durable events written to clients, by kind and source (store: replayed or gap-filled; live: from the backbone).',
    labelNames: ['kind', 'from'],
    registers: [registry],
    collect() {
      for (const entry of unreported.values()) {
        if (entry.count === 0) continue;
        this.inc(entry.labels, entry.count);
        entry.count = 0;
      }
    },
  });
  const deliveryTally = (kind: StreamKind, from: 'store' | 'live') => {
    const key = `${kind}:${from}`;
    let entry = unreported.get(key);
    if (!entry) unreported.set(key, (entry = { labels: { kind, from }, count: 0 }));
    return entry;
  };
  const liveTally = { message: deliveryTally('message', 'live'), notification: deliveryTally('notification', 'live') };
  new Gauge({
    name: 'chat_gateway_streams_open',
    help: 'Streams open in this process (per kind: opened minus closed).',
    registers: [registry],
    collect() {
      this.set(hub()?.stats().sessions ?? 0);
    },
  });
  new Gauge({
    name: 'chat_gateway_scopes_open',
    help: 'Rooms and inboxes with at least one open stream in this process.',
    registers: [registry],
    collect() {
      this.set(hub()?.stats().scopes ?? 0);
    },
  });
  return {
    registry,
    httpDuration: createHttpDurationHistogram(registry),
    coreCalls: createCoreCallHistogram(registry),
    streamOpened: (kind) => opened.inc({ kind }),
    streamClosed: (kind, reason) => closed.inc({ kind, reason }),
    openThrottled: () => throttled.inc(),
    delivered: (kind, from) => {
      (from === 'live' ? liveTally[kind] : deliveryTally(kind, from)).count += 1;
    },
  };
}
