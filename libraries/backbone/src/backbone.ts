/**
 * The event backbone: fanout of events that PostgreSQL already committed. It is not a record.
 * Each event carries its scope's contiguous `seq`, so a reader that sees a jump knows it missed
 * something and re-reads the database; the backbone may drop or repeat under faults, never invent.
 */

/**
 * The event families; each is partitioned and consumed on its own. `messages`: every committed
 * message, for the stream gateways. `mentions`: the committed messages that mention anyone, for the
 * notifier (see `@chat/wire-format`'s message-events.ts). `notifications`: inbox entries, for the stream gateways.
 */
export type Channel = 'messages' | 'mentions' | 'notifications';

export const CHANNELS: readonly Channel[] = ['messages', 'mentions', 'notifications'];

export interface BackboneEvent {
  channel: Channel;
  /** Room id for messages and mentions; inbox key for notifications. The partitioning key: order is kept per scope. */
  scopeKey: string;
  /**
   * Per-scope contiguous sequence (1, 2, 3 ...) assigned by the database at commit. A `mentions`
   * event carries its message's room seq: increasing per room, with gaps.
   */
  seq: number;
  /** JSON payload, opaque to the backbone. */
  data: string;
  /**
   * The W3C `traceparent` of the span that published the event, when tracing is on (see
   * `@chat/tracing`): a consumer's span of the event is its child. Absent from events published
   * untraced and from those of publishers that predate it; readers take both.
   */
  traceparent?: string;
}

export interface DeliveredEvent extends BackboneEvent {
  /** The backbone's own entry id (`<ms>-<n>`), unique per partition; never a durable cursor. */
  entryId: string;
}

export interface Subscription {
  /** Stops delivery; no `onEvent` call happens after the returned promise resolves. */
  close(): Promise<void>;
}

/** Options of a consumer-group member (`consume`). */
export interface ConsumeOptions {
  channel: Channel;
  /** Consumer group name; every group sees every event once (at least once). */
  group: string;
  /** This member's name, unique within the group (e.g. pod name + pid). */
  consumer: string;
  /**
   * Entries read per partition per round.
   * @defaultValue 64
   */
  batchSize?: number;
  /**
   * How long one read waits for new entries; also bounds how long `stop()` takes.
   * @defaultValue 1000
   */
  blockMs?: number;
  /**
   * An entry pending (read, not acknowledged) this long is taken over by another member.
   * Keep it well above the slowest handler run, or healthy work is delivered twice.
   * @defaultValue 30000
   */
  claimIdleMs?: number;
  /**
   * Deliveries allowed per entry; the next one moves it to the dead letters and acknowledges it.
   * @defaultValue 5
   */
  maxDeliveries?: number;
  /**
   * Scopes handled at once within a read batch. The entries of one scope are always handled one after
   * another, in order; above 1, different scopes proceed side by side.
   * @defaultValue 1
   */
  concurrency?: number;
  /**
   * After a read that returned some entries but not a full batch, wait this long before the next
   * read, so that under a steady trickle each read (and its acknowledgement) carries several
   * entries instead of one: fewer round trips per entry, at up to this much added latency. Only the
   * Redis backbone waits; in-process reads cost no round trip.
   * @defaultValue 0
   */
  lingerMs?: number;
  /** Reports handler failures and connection trouble; the consumer keeps going. */
  onError?: (err: Error) => void;
}

/** Group-wide numbers (all members, all partitions) plus this member's counters. */
export interface ConsumerStats {
  /** Entries delivered to some member of the group and not yet acknowledged. */
  pending: number;
  /** Entries not yet delivered to the group; `null` when the store cannot tell (see docs/backbone.md). */
  lag: number | null;
  /** Entries this member handled successfully and acknowledged. */
  acked: number;
  /** Entries this member took over from idle members. */
  reclaimed: number;
  /** Entries this member moved to the dead letters. */
  deadLettered: number;
  /** Handler runs that threw (the entry stays pending). */
  failed: number;
}

export interface Consumer {
  /** Finishes the batch in hand (its handler runs and acknowledgements), then stops reading. */
  stop(): Promise<void>;
  stats(): Promise<ConsumerStats>;
}

/** An entry given up on after too many deliveries, kept for operators. */
export interface DeadLetter extends DeliveredEvent {
  group: string;
  /** Deliveries it had when it was dead-lettered. */
  deliveries: number;
  /** The member that gave up on it. */
  consumer: string;
  /** Epoch milliseconds. */
  deadLetteredAt: number;
}

/** Result of one trimming pass over a channel. */
export interface TrimReport {
  channel: Channel;
  /** Entries removed by this pass. */
  removed: number;
  /** Entries left across the channel's partitions. */
  remaining: number;
}

export interface Backbone {
  /**
   * Publishes events; resolves once the backbone accepted them all (order kept per scopeKey).
   * At least once: a retried call after a failure may repeat events; readers drop repeats by seq.
   * @throws AppError('STREAM_UNAVAILABLE') when the backbone is unreachable; never hangs.
   */
  publish(events: BackboneEvent[]): Promise<void>;
  /**
   * Live fanout of every event published on `channel` after the returned promise resolves
   * (listener first). One subscription per gateway process, demuxed by the caller. `onError`
   * reports loss of the connection: the caller must treat the live feed as broken and re-sync
   * from the database; delivery resumes from the last seen entries once the connection is back.
   */
  subscribe(
    channel: Channel,
    onEvent: (e: DeliveredEvent) => void,
    onError?: (err: Error) => void,
  ): Promise<Subscription>;
  /**
   * Joins a consumer group: at least once; a crashed member's pending entries are taken over after
   * `claimIdleMs`; an entry delivered more than `maxDeliveries` times is dead-lettered and acknowledged.
   */
  consume(opts: ConsumeOptions, handler: (e: DeliveredEvent) => Promise<void>): Promise<Consumer>;
  /** Dead letters of a channel, newest first. */
  deadLetters(channel: Channel, opts?: { limit?: number }): Promise<DeadLetter[]>;
  /**
   * Trims each partition of `channel` below what every group still needs and the retention floor.
   * Also runs by itself every `trimIntervalMs` once the backbone is in use.
   */
  trim(channel: Channel): Promise<TrimReport>;
  /** Health probe. @throws AppError('STREAM_UNAVAILABLE') */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Defaults shared by both implementations, so they behave alike. */
const CONSUME_DEFAULTS = {
  batchSize: 64,
  blockMs: 1000,
  claimIdleMs: 30_000,
  maxDeliveries: 5,
  concurrency: 1,
  lingerMs: 0,
} as const;

export type ResolvedConsumeOptions = Required<Omit<ConsumeOptions, 'onError'>> & Pick<ConsumeOptions, 'onError'>;

export function resolveConsumeOptions(opts: ConsumeOptions): ResolvedConsumeOptions {
  return {
    ...opts,
    batchSize: opts.batchSize ?? CONSUME_DEFAULTS.batchSize,
    blockMs: opts.blockMs ?? CONSUME_DEFAULTS.blockMs,
    claimIdleMs: opts.claimIdleMs ?? CONSUME_DEFAULTS.claimIdleMs,
    maxDeliveries: opts.maxDeliveries ?? CONSUME_DEFAULTS.maxDeliveries,
    concurrency: opts.concurrency ?? CONSUME_DEFAULTS.concurrency,
    lingerMs: opts.lingerMs ?? CONSUME_DEFAULTS.lingerMs,
  };
}

/** Common retention settings (both implementations). */
export interface RetentionOptions {
  /**
   * Entries younger than this are never trimmed, so slightly lagging live subscribers still find them.
   * @defaultValue 60000
   */
  retentionMs?: number;
  /**
   * Period of the automatic trimming pass (started by the first publish or consume); 0 turns it off.
   * @defaultValue 10000
   */
  trimIntervalMs?: number;
  /**
   * Dead letters kept per partition (oldest dropped first).
   * @defaultValue 10000
   */
  deadLetterMaxLength?: number;
}

export const RETENTION_DEFAULTS = { retentionMs: 60_000, trimIntervalMs: 10_000, deadLetterMaxLength: 10_000 } as const;
