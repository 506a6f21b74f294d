import { MODEL_INPUTS, type Range } from './capacity-model.ts';
import type { ScaleResult } from './scale-scenario.ts';
import { formatCount, formatFailures } from './stream-rooms.ts';

/* The scale check's verdict and its printed figures, from a run of scale-scenario.ts. */

/**
 * How far a gateway's CPU share may sit from the model's, relative to it. The model's CPU per
 * gateway is its deliveries over `d_gw` plus every entry read (`A × e_gw`), the same for every
 * gateway here, so it predicts an even split; what moves a measured share is work no formula
 * counts: garbage collection and JIT per process, and how many entries each backbone read returns,
 * which depends on how late each event loop gets to its sockets on two contended cores. Identical
 * gateways sat within 0.7 points of 25 % (2.8 % of the share) in every run so far (see
 * docs/capacity.md, "Checking the model"); ±20 % (5 points at 4 gateways) leaves room for a noisier
 * machine and still fails a gateway doing a fifth more or less work than its even share.
 */
export const GATEWAY_CPU_SHARE_TOLERANCE = 0.2;

/**
 * How far a shard's share of the bytes it sends may sit from its share of the entries served. The
 * bytes that are not entries (replies to XADD, to the scripts and to this check's INFO, empty
 * blocking reads) are a few tens of bytes per operation against ~800 B per entry served: about 2 % of
 * the total, split between the shards, so they move a share by under a point. One gateway of 4 not
 * reading a shard would move it by about 7.
 */
export const EGRESS_SHARE_TOLERANCE = 0.03;

const percent = (share: number) => `${(share * 100).toFixed(1)} %`;
const inRange = (value: number, range: Range) => value >= range.low - 1e-9 && value <= range.high + 1e-9;

/**
 * Where the measurement departs from the model (empty when it agrees): every stream opened and
 * held where the ingress put it; deliveries per gateway exactly its streams' share of the appends;
 * CPU shares within {@link GATEWAY_CPU_SHARE_TOLERANCE}; per shard, XADDs exactly its partitions'
 * appends, script calls within k to k + 1 rounds of lease renewals, the share of
 * operations within the range that follows, the share of bytes sent within
 * {@link EGRESS_SHARE_TOLERANCE} of its share of entries served, and the lease sets and partition streams on the
 * masters their hash tags name, both masters carrying rooms; 0 lost, duplicated, reordered.
 */
export function scaleProblems(result: ScaleResult): string[] {
  const problems: string[] = [];
  const streams = result.shape.rooms * result.shape.perRoom;
  if (result.opened !== streams) problems.push(`${result.opened} of ${streams} streams opened${formatFailures(result.openFailures)}`);
  if (Object.keys(result.writer.failures).length > 0) problems.push(`appends failed: ${JSON.stringify(result.writer.failures)}`);
  if (result.ended > 0) problems.push(`${result.ended} streams ended early${result.warnings ? ` (server warnings: ${result.warnings})` : ''}`);
  for (const { gateway, predicted, measured } of result.gateways) {
    if (measured.streams !== predicted.streams) problems.push(`gateway ${gateway} holds ${measured.streams} streams, the model ${predicted.streams}`);
    if (measured.deliveries !== predicted.deliveries) problems.push(`gateway ${gateway} delivered ${measured.deliveries}, the model ${predicted.deliveries}`);
    const off = Math.abs(measured.cpuShare - predicted.share.cpu) / predicted.share.cpu;
    if (off > GATEWAY_CPU_SHARE_TOLERANCE) problems.push(`gateway ${gateway} CPU share ${percent(measured.cpuShare)}, the model ${percent(predicted.share.cpu)} ± ${GATEWAY_CPU_SHARE_TOLERANCE * 100} %`);
  }
  for (const { port, predicted, measured } of result.shards) {
    if (measured.xadd !== predicted.xadd) problems.push(`shard ${port}: ${measured.xadd} XADD, the model ${predicted.xadd}`);
    const renewals = predicted.renewalCalls;
    if (!inRange(measured.scriptCalls, renewals)) problems.push(`shard ${port}: ${measured.scriptCalls} script calls, the model ${renewals.low}–${renewals.high} renewals`);
    if (Math.abs(measured.egressShare - predicted.egressShare) > EGRESS_SHARE_TOLERANCE) {
      problems.push(`shard ${port}: ${percent(measured.egressShare)} of the bytes sent, the model ${percent(predicted.egressShare)} ± ${EGRESS_SHARE_TOLERANCE * 100} points`);
    }
    if (!inRange(measured.operationsShare, predicted.operationsShare)) {
      problems.push(`shard ${port}: ${percent(measured.operationsShare)} of the operations, the model ${percent(predicted.operationsShare.low)}–${percent(predicted.operationsShare.high)}`);
    }
    for (const family of ['roomSets', 'principalSets', 'partitions'] as const) {
      const want = [...predicted.keys[family]].sort();
      const got = [...measured.keys[family]].sort();
      if (want.join() !== got.join()) problems.push(`shard ${port}: ${got.length} ${family} keys, the model ${want.length} (${want.filter((k) => !got.includes(k)).slice(0, 2).join(', ')} missing)`);
    }
    if (predicted.keys.roomSets.length === 0 || predicted.keys.partitions.length === 0) problems.push(`shard ${port} carries no room`);
  }
  const { order } = result;
  if (order.lost + order.duplicated + order.reordered + order.unexpected > 0 || order.received !== order.expected) {
    problems.push(`deliveries: ${order.lost} lost, ${order.duplicated} duplicated, ${order.reordered} reordered, ${order.unexpected} unexpected, ${order.received} of ${order.expected} received; ${order.samples.join('; ')}`);
  }
  return problems;
}

/** The figures of a run as lines: each process's share next to the model's. */
export function describeScale(result: ScaleResult): Array<{ name: string; value: string; target: string; note?: string }> {
  const { shape } = result;
  const streams = shape.rooms * shape.perRoom;
  const appendsPerSecond = result.writer.created / result.seconds;
  const g = shape.gateways;
  const lines: Array<{ name: string; value: string; target: string; note?: string }> = [];
  const label = `scale, ${g} gateways × ${formatCount(streams / g)} streams, ${shape.rooms} rooms, 2 Redis shards`;
  lines.push({
    name: `${label}: streams per gateway`,
    value: result.gateways.map((x) => `${formatCount(x.measured.streams)} (${percent(x.measured.streams / streams)})`).join(' / '),
    target: `N / G = ${formatCount(streams / g)} (${percent(1 / g)}) each`,
    note: `${result.opened}/${streams} opened in ${result.openSeconds.toFixed(1)} s${formatFailures(result.openFailures)}`,
  });
  const deliveries = result.gateways.reduce((n, x) => n + x.measured.deliveries, 0);
  lines.push({
    name: `${label}: deliveries per gateway`,
    value: result.gateways.map((x) => `${formatCount(x.measured.deliveries)} (${percent(x.measured.deliveries / deliveries)})`).join(' / '),
    target: result.gateways.map((x) => `${formatCount(x.predicted.deliveries)} (${percent(x.predicted.share.deliveries)})`).join(' / '),
    note: `D = A × N / R = ${formatCount(appendsPerSecond)}/s × ${shape.perRoom} = ${formatCount(appendsPerSecond * shape.perRoom)}/s over ${result.seconds.toFixed(1)} s; ${formatCount(result.writer.created)} appends${formatFailures(result.writer.failures)}`,
  });
  // Above idle, a gateway's CPU per append is the model's e_gw plus its streams of the room over d_gw.
  const { deliveriesPerGatewayCpuSecond: dGw, gatewayMsPerEntryRead: eGw } = MODEL_INPUTS;
  const streamsPerRoomPerGateway = shape.perRoom / g;
  const aboveIdleMs = result.gateways.map((x) => ((x.measured.cores - x.measured.idleCores) / appendsPerSecond) * 1000);
  lines.push({
    name: `${label}: CPU per gateway`,
    value: result.gateways.map((x) => `${x.measured.cores.toFixed(3)} cores (${percent(x.measured.cpuShare)})`).join(' / '),
    target: `${percent(1 / g)} each ± ${GATEWAY_CPU_SHARE_TOLERANCE * 100} %; model ${result.gateways[0]!.predicted.cores.low.toFixed(3)}–${result.gateways[0]!.predicted.cores.high.toFixed(3)} cores each`,
    note:
      `model: deliveries / d_gw (${formatCount(dGw.low)}–${formatCount(dGw.high)}) + A × e_gw (${eGw.low}–${eGw.high} ms); ` +
      `idle with the streams held: ${result.gateways.map((x) => x.measured.idleCores.toFixed(3)).join(' / ')} cores; ` +
      `above idle ${aboveIdleMs.map((ms) => ms.toFixed(3)).join(' / ')} ms per append per gateway ` +
      `(model e_gw + ${streamsPerRoomPerGateway} streams / d_gw = ${(eGw.low + (streamsPerRoomPerGateway / dGw.high) * 1000).toFixed(3)}–${(eGw.high + (streamsPerRoomPerGateway / dGw.low) * 1000).toFixed(3)} ms); ` +
      `other processes: ${Object.entries(result.otherCores).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}`,
  });
  for (const { port, predicted, measured } of result.shards) {
    lines.push({
      name: `${label}: Redis shard ${port}`,
      value:
        `${formatCount(measured.xadd)} XADD, ${formatCount(measured.scriptCalls)} script calls (${percent(measured.operationsShare)} of operations); ` +
        `keys: ${measured.keys.roomSets.length} room lease sets, ${measured.keys.principalSets.length} principal sets, ${measured.keys.partitions.length} message partitions; ` +
        `${(measured.netOutputBytes / 1e6).toFixed(1)} MB sent (${percent(measured.egressShare)}), ${measured.cores.toFixed(3)} cores`,
      target:
        `${formatCount(predicted.xadd)} XADD, ${formatCount(predicted.renewalCalls.low)}–${formatCount(predicted.renewalCalls.high)} script calls ` +
        `(${percent(predicted.operationsShare.low)}–${percent(predicted.operationsShare.high)}); keys ${predicted.keys.roomSets.length} / ${predicted.keys.principalSets.length} / ${predicted.keys.partitions.length}; ` +
        `${percent(predicted.egressShare)} of the bytes sent ± ${EGRESS_SHARE_TOLERANCE * 100} points`,
      note: `model: script calls are lease renewals, k to k + 1 rounds of each gateway's sets on the master; ${formatCount(predicted.entriesServed)} entries served (A × G); Redis CPU by the model's sums ${predicted.cores.toFixed(4)} cores`,
    });
  }
  const { order } = result;
  lines.push({
    name: `${label}: deliveries checked per stream`,
    value: `${order.lost} lost, ${order.duplicated} duplicated, ${order.reordered} reordered, ${order.unexpected} unexpected; ${formatCount(order.received)} of ${formatCount(order.expected)} received over ${formatCount(order.streams)} streams`,
    target: '0 lost, 0 duplicated, 0 reordered',
    note: `${result.ended} streams ended early${result.warnings ? `; server warnings: ${result.warnings}` : ''}`,
  });
  return lines;
}

