/**
 * docs/capacity.md's model applied to one deployment's actual load: given where each stream is
 * held and what was appended, what each gateway process and each Redis shard should carry. The
 * scale check (scale-scenario.ts) compares these predictions with what the processes measured.
 */

/** The inputs of docs/capacity.md ("Inputs (measured)") the predictions use; the page is their record. */
export const MODEL_INPUTS = {
  /** `d_gw`: deliveries per gateway CPU-second. */
  deliveriesPerGatewayCpuSecond: { low: 193_000, high: 313_000 },
  /** `e_gw`: gateway CPU per backbone entry read, in ms. */
  gatewayMsPerEntryRead: { low: 0.011, high: 0.06 },
  /** `r_xadd`, `r_read`, `r_renew`: Redis operations per Redis CPU-second. */
  redisXaddPerCpuSecond: 90_700,
  redisEntriesReadPerCpuSecond: 727_000,
  redisRenewalPerCpuSecond: 89_400,
  /** Lease renewal period: `STREAM_LEASE_MS` (30 s) / 3. */
  renewalPeriodMs: 10_000,
} as const;

/** One held stream: the gateway holding it and the Redis keys its lease and its room's events use. */
export interface HeldStream {
  gateway: number;
  roomId: string;
  /** `{cap:r:…}`: the room's lease set. */
  roomSetKey: string;
  /** `{cap:p:…}`: the principal's lease set. */
  principalSetKey: string;
}

/** What the load did, for the predictions. */
export interface ScaleLoad {
  gateways: number;
  streams: HeldStream[];
  /** Messages appended per room (the room's history), by roomId. */
  appendsByRoom: Map<string, number>;
  /** The backbone partition stream (`{messages:pp}`) of each room, by roomId. */
  partitionKeyOfRoom: Map<string, string>;
  /** The writing window the CPU and Redis counters cover, in seconds. */
  seconds: number;
  /** The master serving each key above. */
  masterOf: Map<string, number>;
}

export interface Range {
  low: number;
  high: number;
}

export interface GatewayPrediction {
  gateway: number;
  /** `N / G` for an even ingress; here the count the ingress gave it. */
  streams: number;
  /** Σ over its streams of the room's appends (`D / G` for an even spread). */
  deliveries: number;
  /** `deliveries / d_gw + A × e_gw` over the window, in cores. */
  cores: Range;
  share: { streams: number; deliveries: number; cpu: number };
}

export interface ShardPrediction {
  port: number;
  /** Publish: one XADD per append on its room's partition stream. */
  xadd: number;
  /**
   * Script calls: lease renewals, one per (gateway, busy set) per round; the window holds k or k + 1
   * rounds of each gateway. Takes and releases come when streams open and close, outside the window.
   */
  renewalCalls: Range;
  /** Entries served to gateways: every gateway reads every entry of the shard's partitions (`A × G`). */
  entriesServed: number;
  /** The model's Redis CPU sum for this shard's share of the work (renewals at the mean round count), in cores. */
  cores: number;
  keys: { roomSets: string[]; principalSets: string[]; partitions: string[] };
  /** Share of the operations the model counts (XADD + renewals), as a range over the renewal phase. */
  operationsShare: Range;
  /** Share of the entries served to gateways, which egress follows (`A × G × b_entry`). */
  egressShare: number;
}

const sum = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0);

export function predictGateways(load: ScaleLoad): GatewayPrediction[] {
  const { deliveriesPerGatewayCpuSecond: dGw, gatewayMsPerEntryRead: eGw } = MODEL_INPUTS;
  const appendsPerSecond = sum(load.appendsByRoom.values()) / load.seconds;
  const rows = Array.from({ length: load.gateways }, (_, gateway) => {
    const held = load.streams.filter((s) => s.gateway === gateway);
    const deliveries = sum(held.map((s) => load.appendsByRoom.get(s.roomId) ?? 0));
    const deliveriesPerSecond = deliveries / load.seconds;
    const cores = {
      low: deliveriesPerSecond / dGw.high + (appendsPerSecond * eGw.low) / 1000,
      high: deliveriesPerSecond / dGw.low + (appendsPerSecond * eGw.high) / 1000,
    };
    return { gateway, streams: held.length, deliveries, cores };
  });
  const totalStreams = sum(rows.map((r) => r.streams));
  const totalDeliveries = sum(rows.map((r) => r.deliveries));
  const mid = (r: Range) => (r.low + r.high) / 2;
  const totalCores = sum(rows.map((r) => mid(r.cores)));
  return rows.map((r) => ({
    ...r,
    share: { streams: r.streams / totalStreams, deliveries: r.deliveries / totalDeliveries, cpu: mid(r.cores) / totalCores },
  }));
}

export function predictShards(load: ScaleLoad, ports: number[]): ShardPrediction[] {
  const inputs = MODEL_INPUTS;
  const on = (key: string, port: number) => load.masterOf.get(key) === port;
  // The sets each gateway renews every round: one call per set it holds a lease in.
  const setsByGateway = Array.from({ length: load.gateways }, (_, g) => new Set(load.streams.filter((s) => s.gateway === g).flatMap((s) => [s.roomSetKey, s.principalSetKey])));
  const rounds = load.seconds / (inputs.renewalPeriodMs / 1000);
  const fewest = Math.max(0, Math.ceil(rounds) - 1);
  const most = Math.floor(rounds) + 1;
  const rooms = [...load.appendsByRoom.keys()];
  const rows = ports.map((port) => {
    const xadd = sum(rooms.filter((room) => on(load.partitionKeyOfRoom.get(room)!, port)).map((room) => load.appendsByRoom.get(room)!));
    const perRound = sum(setsByGateway.map((sets) => [...sets].filter((key) => on(key, port)).length));
    const renewalCalls = { low: perRound * fewest, high: perRound * most };
    const entriesServed = xadd * load.gateways;
    const cpuSeconds =
      xadd / inputs.redisXaddPerCpuSecond +
      entriesServed / inputs.redisEntriesReadPerCpuSecond +
      (perRound * rounds) / inputs.redisRenewalPerCpuSecond;
    const cores = cpuSeconds / load.seconds;
    const keys = {
      roomSets: [...new Set(load.streams.map((s) => s.roomSetKey))].filter((k) => on(k, port)),
      principalSets: [...new Set(load.streams.map((s) => s.principalSetKey))].filter((k) => on(k, port)),
      partitions: [...new Set(rooms.map((room) => load.partitionKeyOfRoom.get(room)!))].filter((k) => on(k, port)),
    };
    return { port, xadd, renewalCalls, entriesServed, cores, keys, perRound };
  });
  // A shard's share is lowest when it gets the fewest renewal rounds and every other shard the most.
  const entriesServed = sum(rows.map((r) => r.entriesServed));
  return rows.map((r) => {
    const others = rows.filter((o) => o !== r);
    const low = (r.xadd + r.renewalCalls.low) / (r.xadd + r.renewalCalls.low + sum(others.map((o) => o.xadd + o.renewalCalls.high)));
    const high = (r.xadd + r.renewalCalls.high) / (r.xadd + r.renewalCalls.high + sum(others.map((o) => o.xadd + o.renewalCalls.low)));
    const { perRound: _perRound, ...prediction } = r;
    return { ...prediction, operationsShare: { low, high }, egressShare: r.entriesServed / entriesServed };
  });
}
