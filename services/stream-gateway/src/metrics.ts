import type { Channel } from '@chat/backbone';
import { createCoreCallHistogram, createHttpDurationHistogram, registerPoolMetrics, type PoolOccupancy } from '@chat/observability';
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
  /**
   * A live event written to every stream of its scope on this gateway, `seconds` after its commit
   * (its `createdAt`): one sample per event and gateway, not per stream (see stream-hub.ts).
   */
  deliveredLive(kind: StreamKind, seconds: number): void;
  /** A backbone entry read from `channel`, `seconds` after it was published. */
  backboneRead(channel: Channel, seconds: number): void;
}

/**
 * Buckets of the latency histograms: 5 ms to 10 s, with 1 s (the delivery objective: 99 % of live
 * deliveries within 1 s of commit) and 0.5 s (the backbone lag objective) among the bounds, so the
 * alerts read the share below them exactly.
 */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface GatewayMetricsOptions {
  /** Node's process metrics (`chat_gateway_process_*`, `chat_gateway_nodejs_*`). @defaultValue true */
  defaultMetrics?: boolean;
  /** The database pool's occupancy (see `registerPoolMetrics`). @defaultValue none */
  poolStats?: () => PoolOccupancy | undefined;
  /** The core client's authorization queue: its peak since the previous reading, and its bound (`CoreClient.takeAuthorizationQueuePeak`). @defaultValue none */
  coreQueue?: () => { peak: number; bound: number };
}

/**
 * Creates the registry; open streams and scopes are read from the hub at scrape time. Close reasons
 * carry handoffs (`rotation`, `shutdown`), reauthorizations (`access_revoked`,
 * `authorization_unavailable`, `token_expiring`) and slow-consumer closes (`slow_consumer`).
 */
export function createGatewayMetrics(hub: () => StreamHub | undefined, options: GatewayMetricsOptions = {}): GatewayMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'chat_gateway_' });
  registerPoolMetrics(registry, options.poolStats ?? (() => undefined));
  const deliveryLatency = new Histogram({
    name: 'chat_gateway_delivery_latency_seconds',
    help: "Commit to client: from a live event's commit (its createdAt) to its write to the last of this gateway's streams of its scope; one sample per event and gateway, by kind",
    labelNames: ['kind'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const backboneLag = new Histogram({
    name: 'chat_gateway_backbone_lag_seconds',
    help: 'Backbone lag: from an entry\'s publish (its Redis entry ID) to this gateway reading it, by channel',
    labelNames: ['channel'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  // Label objects made once: a sample per event must not allocate one.
  const kindLabels = { message: { kind: 'message' }, notification: { kind: 'notification' } } as const;
  const channelLabels = { messages: { channel: 'messages' }, mentions: { channel: 'mentions' }, notifications: { channel: 'notifications' } } as const;
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
  // Read at scrape time: the peak since the previous scrape, so a burst of opens between two
  // scrapes shows even when the queue has emptied by the second.
  const coreQueue = options.coreQueue;
  if (coreQueue) {
    let bound = 0;
    new Gauge({
      name: 'chat_gateway_core_queue_peak',
      help: 'Most authorizations waiting for a call to core at once since the previous scrape (past chat_gateway_core_queue_bound an open is refused 503 AUTHORIZATION_UNAVAILABLE).',
      registers: [registry],
      collect() {
        const queue = coreQueue();
        bound = queue.bound;
        this.set(queue.peak);
      },
    });
    new Gauge({
      name: 'chat_gateway_core_queue_bound',
      help: 'Authorizations that may wait for a call to core at once; past it an open is refused 503 AUTHORIZATION_UNAVAILABLE.',
      registers: [registry],
      collect() {
        this.set(bound);
      },
    });
  }
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
    deliveredLive: (kind, seconds) => deliveryLatency.observe(kindLabels[kind], seconds),
    backboneRead: (channel, seconds) => backboneLag.observe(channelLabels[channel], seconds),
    delivered: (kind, from) => {
      (from === 'live' ? liveTally[kind] : deliveryTally(kind, from)).count += 1;
    },
  };
}
