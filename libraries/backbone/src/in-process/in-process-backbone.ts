import { AppError } from '@chat/contracts';
import { CHANNELS, RETENTION_DEFAULTS, resolveConsumeOptions } from '../backbone.ts';
import type { Backbone, BackboneEvent, Channel, ConsumeOptions, Consumer, DeadLetter, DeliveredEvent, RetentionOptions, Subscription, TrimReport } from '../backbone.ts';
import { ChannelLog } from './channel-log.ts';
import { InProcessConsumer } from './in-process-consumer.ts';

type InProcessBackboneOptions = RetentionOptions;

interface Listener {
  onEvent: (e: DeliveredEvent) => void;
  onError: ((err: Error) => void) | undefined;
}

/**
 * The backbone inside one process (the all-in-one mode on PGlite): the Redis backbone's semantics
 * on an in-memory log per channel, trimmed by the same rule on the publish path, so memory stays
 * bounded by the retention window plus whatever a consumer group has not finished.
 */
export class InProcessBackbone implements Backbone {
  private readonly logs: Map<Channel, ChannelLog>;
  private readonly listeners = new Map<Channel, Set<Listener>>();
  private readonly consumers = new Set<Consumer>();
  private readonly retentionMs: number;
  private readonly trimIntervalMs: number;
  private lastTrimAt = Date.now();
  private closed = false;

  constructor(options: InProcessBackboneOptions = {}) {
    this.retentionMs = options.retentionMs ?? RETENTION_DEFAULTS.retentionMs;
    this.trimIntervalMs = options.trimIntervalMs ?? RETENTION_DEFAULTS.trimIntervalMs;
    const deadMax = options.deadLetterMaxLength ?? RETENTION_DEFAULTS.deadLetterMaxLength;
    this.logs = new Map(CHANNELS.map((c) => [c, new ChannelLog(deadMax)]));
    for (const channel of CHANNELS) this.listeners.set(channel, new Set());
  }

  async publish(events: BackboneEvent[]): Promise<void> {
    this.assertOpen();
    for (const event of events) {
      const delivered = this.log(event.channel).append(event);
      for (const listener of this.listenersOf(event.channel)) {
        try {
          listener.onEvent(delivered);
        } catch (err) {
          listener.onError?.(err instanceof Error ? err : new Error(String(err)));
        }
      }
    }
    if (this.trimIntervalMs > 0 && Date.now() - this.lastTrimAt >= this.trimIntervalMs) {
      this.lastTrimAt = Date.now();
      for (const channel of CHANNELS) this.log(channel).trim(this.retentionMs);
    }
  }

  async subscribe(channel: Channel, onEvent: (e: DeliveredEvent) => void, onError?: (err: Error) => void): Promise<Subscription> {
    this.assertOpen();
    const listener: Listener = { onEvent, onError };
    // Registered before resolving: listener first, as with Redis.
    this.listenersOf(channel).add(listener);
    return {
      close: async () => {
        this.listenersOf(channel).delete(listener);
      },
    };
  }

  async consume(opts: ConsumeOptions, handler: (e: DeliveredEvent) => Promise<void>): Promise<Consumer> {
    this.assertOpen();
    const consumer = new InProcessConsumer(this.log(opts.channel), resolveConsumeOptions(opts), handler);
    consumer.start();
    const handle: Consumer = {
      stop: async () => {
        this.consumers.delete(handle);
        await consumer.stop();
      },
      stats: () => consumer.stats(),
    };
    this.consumers.add(handle);
    return handle;
  }

  async deadLetters(channel: Channel, opts: { limit?: number } = {}): Promise<DeadLetter[]> {
    return this.log(channel).deadLetters(opts.limit ?? 100);
  }

  async trim(channel: Channel): Promise<TrimReport> {
    return { channel, ...this.log(channel).trim(this.retentionMs) };
  }

  async ping(): Promise<void> {
    this.assertOpen();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.consumers].map((c) => c.stop()));
    for (const set of this.listeners.values()) set.clear();
  }

  private log(channel: Channel): ChannelLog {
    const log = this.logs.get(channel);
    if (!log) throw new TypeError(`unknown channel ${String(channel)}`);
    return log;
  }

  private listenersOf(channel: Channel): Set<Listener> {
    const set = this.listeners.get(channel);
    if (!set) throw new TypeError(`unknown channel ${String(channel)}`);
    return set;
  }

  private assertOpen(): void {
    if (this.closed) throw new AppError('STREAM_UNAVAILABLE', 'The event stream is unavailable.');
  }
}
