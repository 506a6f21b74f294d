/**
 * The contract's floor: the unavoidable CPU of one append on this machine, each part measured on its
 * own in the run (docs/benchmarks.md, "The floor"), and the service's own CPU per append at
 * saturation next to it. `measureFloorParts` runs everything but Nchan; `floorFigures` adds Nchan's
 * part, taken from the side-by-side run when it ran, or measured here.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newUlid } from '@chat/contracts';
import { startBenchCluster } from './bench-cluster.ts';
import { measureHttpFloor, measureRedisFloor, type PeerFloor } from './floor-peers.ts';
import { measurePostgresFloor, type PostgresFloor } from './floor-postgres.ts';
import { floorBodyMarkdown, measureAppendSizes, measureServiceAtSaturation, type AppendSizes, type ServiceAtSaturation } from './floor-service.ts';
import { runNchanFanout } from './nchan-fanout.ts';
import { ensureNchan, locateHarness } from './side-by-side.ts';
import { WRITER_COUNTS } from './append-throughput.ts';

/** Deliveries of one append in side-by-side scenario c (1,000 rooms × 2 streams), and in the service's figure here. */
export const DELIVERIES_PER_APPEND = 2;

/** The roles of the service's figure; dev-core and the load client are reported apart. */
const SERVICE_ROLES = ['api', 'gateway', 'notifier', 'postgres', 'redis'] as const;

export interface FloorParts {
  sizes: AppendSizes;
  service: ServiceAtSaturation;
  postgres: PostgresFloor | undefined;
  http: PeerFloor;
  redis: PeerFloor;
  load: string;
}

export interface FloorFigure {
  name: string;
  value: string;
  target: string;
  note?: string;
}

const loadAverage = async () => (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');

/**
 * The service at saturation (a distributed deployment of 2 APIs, 2 gateways and a notifier, every
 * append delivered to 2 streams) and the floor's parts that need no Nchan: the append transaction
 * in raw PostgreSQL, one HTTP exchange between minimal Node processes and one event through Redis,
 * each at the sizes the service's append has.
 */
export async function measureFloorParts(options: { quick: boolean; progress: (line: string) => void }): Promise<FloorParts> {
  const load = await loadAverage();
  const seconds = options.quick ? 3 : 8;
  const cluster = await startBenchCluster('distributed', { apis: 2, gateways: 2 });
  let sizes: AppendSizes;
  let service: ServiceAtSaturation;
  try {
    sizes = await measureAppendSizes(cluster);
    options.progress(`sizes: request ${sizes.requestBodyBytes} B, 201 ${sizes.answerBytes} B, event ${sizes.eventBytes} B`);
    service = await measureServiceAtSaturation(cluster, {
      perRoom: DELIVERIES_PER_APPEND,
      seconds: options.quick ? 3 : 10,
      warmupSeconds: options.quick ? 2 : 5,
      writerCounts: options.quick ? [64, 128] : WRITER_COUNTS,
    });
  } finally {
    await cluster.stop();
  }
  options.progress(`service: ${Math.round(service.best.appendsPerSecond)} appends/s at ${service.best.clients} writers`);
  const postgres = await measurePostgresFloor({ bodyMarkdown: floorBodyMarkdown(0, 0), clients: 8, seconds, warmupSeconds: 2 });
  const headers = { authorization: `Bearer ${'x'.repeat(Math.max(0, sizes.authorizationBytes - 7))}`, 'content-type': 'application/json', 'idempotency-key': newUlid() };
  const http = await measureHttpFloor({ requestBytes: sizes.requestBodyBytes, answerBytes: sizes.answerBytes, headers, concurrency: 64, seconds, warmupSeconds: 1 });
  const redis = await measureRedisFloor({ eventBytes: sizes.eventBytes, concurrency: 32, seconds, warmupSeconds: 1 });
  return { sizes, service, postgres, http, redis, load };
}

/** Nchan's server CPU per delivery of a body the service's event's size: from the side-by-side run, or measured now in scenario c. */
export async function nchanPerDelivery(eventBytes: number, fromSideBySide: number | undefined): Promise<{ us: number; source: string } | string> {
  if (fromSideBySide !== undefined) return { us: fromSideBySide, source: 'side-by-side scenario c of this run' };
  const harness = locateHarness();
  if (!harness) return 'the shared harness is not found (set SIDE_BY_SIDE_BENCH_DIR)';
  const missing = ensureNchan();
  if (missing) return missing;
  const out = join(await mkdtemp(join(tmpdir(), 'floor-nchan-')), 'nchanpad-c-run1.txt');
  const result = (await runNchanFanout(harness, 'c', eventBytes, out)) as { server?: { cpuUsPerDelivery?: number } } | undefined;
  const us = result?.server?.cpuUsPerDelivery;
  return typeof us === 'number' ? { us, source: `scenario c measured here (${out})` } : `Nchan's scenario c gave no result (${out})`;
}

const us = (v: number) => `${Math.round(v).toLocaleString('en-US')} µs`;
const parts = (xs: Record<string, number>) =>
  Object.entries(xs)
    .map(([k, v]) => `${k} ${Math.round(v)}`)
    .join(', ');

/** The floor's parts, their sum, the service's figure and the ratio, as figures. */
export function floorFigures(f: FloorParts, nchan: { us: number; source: string } | string): FloorFigure[] {
  const perAppend = (label: string) => ((f.service.best.cpuMs[label] ?? 0) * 1000) / Math.max(1, f.service.best.appended);
  const serviceUs = SERVICE_ROLES.reduce((s, role) => s + perAppend(role), 0);
  const figures: FloorFigure[] = [];
  const pg = f.postgres;
  figures.push({
    name: 'floor: the append transaction in raw PostgreSQL (pgbench, 100 rooms)',
    value: pg ? `${us(pg.cpuUs)} per append` : 'not measured: pgbench not found',
    target: '—',
    note: pg ? `${Math.round(pg.transactionsPerSecond).toLocaleString('en-US')} tx/s at ${pg.clients} clients; pgbench ${Math.round(pg.pgbenchUs)}, PostgreSQL ${Math.round(pg.postgresUs)} µs` : undefined,
  });
  figures.push({
    name: `floor: one HTTP request (${f.sizes.requestBodyBytes} B) and its 201 (${f.sizes.answerBytes} B), node:http to node:http, keep-alive`,
    value: `${us(f.http.cpuUs)} per append`,
    target: '—',
    note: `${Math.round(f.http.perSecond).toLocaleString('en-US')} requests/s, 64 in flight; ${parts(f.http.byProcess)} µs`,
  });
  figures.push({
    name: `floor: one XADD of a ${f.sizes.eventBytes} B event and its blocking XREAD (Redis)`,
    value: `${us(f.redis.cpuUs)} per append`,
    target: '—',
    note: `${Math.round(f.redis.perSecond).toLocaleString('en-US')} events/s, 32 XADDs in flight; ${parts(f.redis.byProcess)} µs`,
  });
  const nchanUs = typeof nchan === 'string' ? undefined : nchan.us * DELIVERIES_PER_APPEND;
  figures.push({
    name: `floor: Nchan's CPU per delivery of a ${f.sizes.eventBytes} B body × ${DELIVERIES_PER_APPEND} deliveries`,
    value: nchanUs === undefined ? `not measured: ${nchan as string}` : `${us(nchanUs)} per append`,
    target: '—',
    note: typeof nchan === 'string' ? undefined : `${Math.round(nchan.us)} µs per delivery, ${nchan.source}`,
  });
  const floor = pg && nchanUs !== undefined ? pg.cpuUs + f.http.cpuUs + f.redis.cpuUs + nchanUs : undefined;
  figures.push({ name: 'the floor: the parts summed', value: floor === undefined ? 'incomplete' : `${us(floor)} per append`, target: '—', note: `load average at the start ${f.load}` });
  const best = f.service.best;
  figures.push({
    name: `service CPU per append at saturation, distributed, 100 rooms × ${DELIVERIES_PER_APPEND} streams (services, PostgreSQL, Redis)`,
    value: `${us(serviceUs)} per append`,
    target: '—',
    note:
      `${Math.round(best.appendsPerSecond).toLocaleString('en-US')} appends/s at ${best.clients} writers (${f.service.levels.map((l) => `${l.clients}: ${Math.round(l.appendsPerSecond)}/s`).join(', ')}), ` +
      `${f.service.deliveriesPerAppend.toFixed(2)} deliveries and ${(1 / f.service.appendsPerCommit).toFixed(2)} commits per append (${f.service.appendsPerCommit.toFixed(1)} appends per transaction of its database), ${best.failed} failed; ${SERVICE_ROLES.map((r) => `${r} ${Math.round(perAppend(r))}`).join(', ')} µs; ` +
      `apart: dev-core ${Math.round(perAppend('dev-core'))} µs, load client ${Math.round(perAppend('load client'))} µs`,
  });
  figures.push({
    name: 'service ÷ floor',
    value: floor === undefined ? '—' : `${(serviceUs / floor).toFixed(2)}×`,
    target: '≤ 1.5×',
    note: floor === undefined ? undefined : serviceUs / floor <= 1.5 ? 'met' : 'not met',
  });
  return figures;
}
