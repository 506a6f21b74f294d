/**
 * Rules that keep the deployment operable under load and through changes: headroom between the
 * gateway autoscaler's target and the connection cap, disruption budgets that never block a drain,
 * stream holders protected from eviction and preemption, config edits that roll the pods, database
 * pools whose sum the docs state, and schema changes made by the migration Job alone.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { containerEnv, issueFor, ofKind, workloads, type ContainerView, type Rule, type RuleContext } from './rule-context.ts';
import {
  CONFIG_CHECKSUM_ANNOTATION,
  DEFAULT_MAX_CONNECTIONS,
  DESIGN_LOAD_MARGIN,
  HPA_TOLERANCE,
  POOL_SUM_DOCS,
  WORKLOADS,
} from './service-catalog.ts';
import type { Issue, KubeObject } from './issue.ts';

interface HpaSpec {
  scaleTargetRef: { kind: string; name: string };
  maxReplicas: number;
  metrics?: Array<{ type: string; pods?: { metric?: { name?: string }; target?: { type?: string; averageValue?: string | number } } }>;
}

const SUFFIXES: Record<string, number> = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 };

/** A Kubernetes quantity (`500m`, `2Gi`, `16k`, `20000`) as a number, or NaN. */
export function quantity(value: string | number | undefined): number {
  if (typeof value === 'number') return value;
  const match = /^([0-9.]+)([a-zA-Z]*)$/.exec(value ?? '');
  if (!match) return Number.NaN;
  const factor = match[2] === '' ? 1 : SUFFIXES[match[2]!];
  return factor === undefined ? Number.NaN : Number(match[1]) * factor;
}

/** A lock wait above this is no safeguard: a table's queries would queue behind the DDL that long. */
const MAX_MIGRATION_LOCK_TIMEOUT_MS = 30_000;
/** The others that take a lost gateway's streams, and the time they take it in (docs/operations.md "Headroom"). */
const LOST_POD_SURVIVORS = 4;
const LOST_POD_RECONNECT_S = 10;

const componentOf = (object: KubeObject) => object.metadata?.labels?.['app.kubernetes.io/component'] ?? '';

function deployments(ctx: RuleContext) {
  return workloads(ctx).filter((w) => w.object.kind === 'Deployment');
}

function hpaFor(ctx: RuleContext, deployment: string): { file: string; object: KubeObject; spec: HpaSpec } | undefined {
  const found = ofKind(ctx, 'HorizontalPodAutoscaler').find((h) => {
    const ref = (h.object.spec as HpaSpec).scaleTargetRef;
    return ref.kind === 'Deployment' && ref.name === deployment;
  });
  return found && { ...found, spec: found.object.spec as HpaSpec };
}

/** The load docs/capacity.md sizes for, in concurrent streams. */
function designStreams(repoRoot: string): number | undefined {
  const path = join(repoRoot, 'docs/capacity.md');
  if (!existsSync(path)) return undefined;
  const match = /Target load: \*\*([\d,]+) concurrent streams/.exec(readFileSync(path, 'utf8'));
  return match ? Number(match[1]!.replaceAll(',', '')) : undefined;
}

/**
 * Headroom: a stream-holding workload's per-pod target stays below its connection cap by more than
 * the HPA's tolerance (pods at the target refuse nothing), and its maximum holds the design load of
 * docs/capacity.md plus a margin at that target.
 */
export const gatewayHeadroom: Rule = (ctx) =>
  deployments(ctx)
    .filter(({ object }) => WORKLOADS[componentOf(object)]?.holdsStreams)
    .flatMap(({ object, pod }) => {
      const hpa = hpaFor(ctx, object.metadata?.name ?? '');
      if (!hpa) return [];
      const issues: Issue[] = [];
      const env = containerEnv(ctx, pod.containers[0]!);
      const configured = env.get('HTTP_MAX_CONNECTIONS');
      const cap = typeof configured === 'string' ? Number(configured) : DEFAULT_MAX_CONNECTIONS;
      for (const metric of (hpa.spec.metrics ?? []).filter((m) => m.type === 'Pods')) {
        const target = quantity(metric.pods?.target?.averageValue);
        if (!Number.isFinite(target)) continue;
        const acted = target * (1 + HPA_TOLERANCE);
        if (acted >= cap) {
          issues.push(issueFor(hpa.file, hpa.object, `target ${target} streams per pod leaves no headroom: the HPA adds pods only past ${Math.round(acted)} (its ${HPA_TOLERANCE * 100} % tolerance), at or above HTTP_MAX_CONNECTIONS ${cap}, where the pod refuses connections`));
        }
        const design = designStreams(ctx.repoRoot);
        if (design === undefined) {
          issues.push(issueFor(hpa.file, hpa.object, 'docs/capacity.md states no "Target load: **N concurrent streams"** to size maxReplicas from'));
          continue;
        }
        const needed = Math.ceil((design * (1 + DESIGN_LOAD_MARGIN)) / target);
        if (hpa.spec.maxReplicas < needed) {
          issues.push(issueFor(hpa.file, hpa.object, `maxReplicas ${hpa.spec.maxReplicas} holds ${hpa.spec.maxReplicas * target} streams at the target; docs/capacity.md's ${design} plus ${DESIGN_LOAD_MARGIN * 100} % needs ${needed}`));
        }
      }
      return issues;
    });

/** Every disruption budget lets a drain evict pods that are not ready (they protect nothing). */
export const budgetsEvictUnhealthy: Rule = (ctx) =>
  ofKind(ctx, 'PodDisruptionBudget')
    .filter(({ object }) => (object.spec as { unhealthyPodEvictionPolicy?: string }).unhealthyPodEvictionPolicy !== 'AlwaysAllow')
    .map(({ file, object }) => issueFor(file, object, 'unhealthyPodEvictionPolicy must be AlwaysAllow: otherwise pods made unready by a shared outage block every node drain'));

function guaranteed(c: ContainerView): boolean {
  return ['cpu', 'memory'].every((r) => {
    const request = quantity(c.resources?.requests?.[r]);
    return Number.isFinite(request) && request === quantity(c.resources?.limits?.[r]);
  });
}

/** Pods that hold streams for long are the last evicted (Guaranteed QoS) and preempted after default-priority pods. */
export const streamHoldersProtected: Rule = (ctx) => {
  const classes = new Map(ofKind(ctx, 'PriorityClass').map((p) => [p.object.metadata?.name, p.object as KubeObject & { value?: number; globalDefault?: boolean }]));
  return deployments(ctx)
    .filter(({ object }) => WORKLOADS[componentOf(object)]?.holdsStreams)
    .flatMap(({ file, object, pod }) => {
      const issues = pod.containers
        .filter((c) => !guaranteed(c))
        .map((c) => issueFor(file, object, `container ${c.name}: requests must equal limits for cpu and memory (Guaranteed QoS), so node pressure evicts other pods before a pod holding streams`));
      const priority = pod.priorityClassName === undefined ? undefined : classes.get(pod.priorityClassName);
      if (!priority || !((priority.value ?? 0) > 0) || priority.globalDefault === true) {
        issues.push(issueFor(file, object, `priorityClassName must name a PriorityClass of these manifests with a value above 0 that is not the global default (has ${JSON.stringify(pod.priorityClassName ?? null)})`));
      }
      return issues;
    });
};

/** SHA-256 of a ConfigMap's data, over its keys in sorted order. */
export function configChecksum(data: Record<string, string>): string {
  const sorted = Object.fromEntries(Object.keys(data).sort().map((k) => [k, data[k]]));
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex');
}

/**
 * A Deployment that takes a ConfigMap carries its checksum on the pod template, so editing the
 * ConfigMap changes the template and rolls the pods (a process reads its environment once, at start).
 */
export const configChangesRoll: Rule = (ctx) => {
  const checksums = new Map(ofKind(ctx, 'ConfigMap').map((m) => [m.object.metadata?.name, configChecksum((m.object.data ?? {}) as Record<string, string>)]));
  return deployments(ctx).flatMap(({ file, object, pod, podAnnotations }) => {
    const used = [...new Set(pod.containers.flatMap((c) => (c.envFrom ?? []).flatMap((f) => (f.configMapRef ? [f.configMapRef.name] : []))))];
    if (used.length === 0) return [];
    const expected = used.length === 1 ? checksums.get(used[0]) : configChecksum(Object.fromEntries(used.map((n) => [n, checksums.get(n) ?? ''])));
    const actual = podAnnotations[CONFIG_CHECKSUM_ANNOTATION];
    return actual === expected ? [] : [issueFor(file, object, `pod template annotation ${CONFIG_CHECKSUM_ANNOTATION} is ${JSON.stringify(actual ?? null)}; the ConfigMap's data hashes to ${expected}: set it, so the change rolls the pods`)];
  });
};

function readsDatabase(ctx: RuleContext, c: ContainerView): boolean {
  return containerEnv(ctx, c).has('DATABASE_URL');
}

/**
 * Each Deployment that connects to PostgreSQL sets its own DATABASE_POOL_SIZE, and the sum over
 * every such Deployment at its HPA maximum is the figure docs/operations.md and docs/capacity.md
 * state ("N client connections at the HPA maxima"), so the pooler is sized from the truth.
 */
export const poolSumDocumented: Rule = (ctx) => {
  const issues: Issue[] = [];
  let sum = 0;
  const terms: string[] = [];
  for (const { file, object, pod } of deployments(ctx)) {
    const c = pod.containers.find((x) => readsDatabase(ctx, x));
    if (!c) continue;
    const own = c.env?.find((e) => e.name === 'DATABASE_POOL_SIZE')?.value;
    if (own === undefined || !/^\d+$/.test(own)) {
      issues.push(issueFor(file, object, `container ${c.name} connects to PostgreSQL but sets no DATABASE_POOL_SIZE of its own (env): each service's pool is sized for its work and summed in the docs`));
      continue;
    }
    const max = hpaFor(ctx, object.metadata?.name ?? '')?.spec.maxReplicas ?? 0;
    sum += max * Number(own);
    terms.push(`${object.metadata?.name} ${max} × ${own}`);
  }
  if (issues.length > 0) return issues;
  for (const doc of POOL_SUM_DOCS) {
    const path = join(ctx.repoRoot, doc);
    const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
    const stated = [...text.matchAll(/\*{0,2}([\d,]+)\*{0,2} client connections at the HPA maxima/g)].map((m) => Number(m[1]!.replaceAll(',', '')));
    if (stated.length === 0 || stated.some((n) => n !== sum)) {
      issues.push({ file: doc, message: `must state "${sum.toLocaleString('en-US')} client connections at the HPA maxima" (${terms.join(' + ')}), states ${stated.length === 0 ? 'none' : stated.join(', ')}` });
    }
  }
  return issues;
};

/**
 * Only the migration Job changes the schema: every Deployment that connects to PostgreSQL runs with
 * MIGRATE_ON_START=false; the Job takes the ConfigMap and its DATABASE_URL from a Secret no
 * Deployment reads (the DDL role, which no long-running pod holds). It connects to PostgreSQL
 * directly (DATABASE_POOLER=none): a migration outside a transaction (CREATE INDEX CONCURRENTLY)
 * needs one session, and a long index build would meet the pooler's query timeout. Its statements
 * give up on a lock after MIGRATION_LOCK_TIMEOUT_MS, set explicitly, so a schema change never
 * queues a table's queries behind a long transaction for longer than that.
 */
export const migrationsFromTheJobOnly: Rule = (ctx) => {
  const issues: Issue[] = [];
  const runtimeSecrets = new Set<string>();
  for (const { file, object, pod } of deployments(ctx)) {
    for (const c of pod.containers) {
      const env = containerEnv(ctx, c);
      for (const value of env.values()) if (typeof value !== 'string') runtimeSecrets.add(value.secret);
      if (env.has('DATABASE_URL') && env.get('MIGRATE_ON_START') !== 'false') {
        issues.push(issueFor(file, object, `container ${c.name} connects to PostgreSQL with MIGRATE_ON_START ${JSON.stringify(env.get('MIGRATE_ON_START') ?? 'unset (true)')}: only the migration Job may change the schema (set "false" in the ConfigMap)`));
      }
    }
  }
  for (const { file, object, pod } of workloads(ctx).filter((w) => w.object.kind === 'Job' && componentOf(w.object) === 'migrate')) {
    for (const c of pod.containers) {
      const env = containerEnv(ctx, c);
      if (!(c.envFrom ?? []).some((f) => f.configMapRef)) issues.push(issueFor(file, object, `container ${c.name} must take the ConfigMap (envFrom), as the services do`));
      if (typeof env.get('DATABASE_POOLER') !== 'string') issues.push(issueFor(file, object, `container ${c.name} has no DATABASE_POOLER: behind a transaction pooler the migration must know it, as every service does`));
      else if (env.get('DATABASE_POOLER') !== 'none') {
        issues.push(issueFor(file, object, `container ${c.name} migrates through a transaction pooler (DATABASE_POOLER ${JSON.stringify(env.get('DATABASE_POOLER'))}): set "none" in its env and point its DATABASE_URL at PostgreSQL itself, since a migration outside a transaction needs one session`));
      }
      const lockTimeout = Number(env.get('MIGRATION_LOCK_TIMEOUT_MS'));
      if (!(Number.isInteger(lockTimeout) && lockTimeout > 0 && lockTimeout <= MAX_MIGRATION_LOCK_TIMEOUT_MS)) {
        issues.push(issueFor(file, object, `container ${c.name} needs MIGRATION_LOCK_TIMEOUT_MS between 1 and ${MAX_MIGRATION_LOCK_TIMEOUT_MS}: a DDL statement waiting for a lock holds every query of its table behind it`));
      }
      const url = env.get('DATABASE_URL');
      if (url === undefined || typeof url === 'string') issues.push(issueFor(file, object, `container ${c.name} must take DATABASE_URL from a Secret (the DDL role)`));
      else if (runtimeSecrets.has(url.secret)) {
        issues.push(issueFor(file, object, `container ${c.name} takes DATABASE_URL from Secret ${url.secret}, which the Deployments read: the DDL role's URL belongs in a Secret of the Job's own`));
      }
    }
  }
  return issues;
};

/**
 * A gateway pod admits stream opens at a rate of its own, set explicitly, so that an unplanned loss
 * of a pod cannot flood the others with more opens (each a token check, a core call and leases) than
 * they serve while keeping their own streams; and the rate still lets a lost pod's streams (the
 * autoscaler's target) reconnect on LOST_POD_SURVIVORS others within LOST_POD_RECONNECT_S.
 */
export const gatewayOpenRateSet: Rule = (ctx) => {
  const issues: Issue[] = [];
  for (const { file, object, pod } of deployments(ctx).filter((d) => componentOf(d.object) === 'stream-gateway')) {
    const target = targetStreamsPerPod(ctx, object.metadata?.name ?? '');
    for (const c of pod.containers) {
      const env = containerEnv(ctx, c);
      const rate = Number(env.get('GATEWAY_STREAM_OPENS_PER_SECOND'));
      const burst = Number(env.get('GATEWAY_STREAM_OPEN_BURST'));
      if (!(Number.isInteger(rate) && rate > 0) || !(Number.isInteger(burst) && burst > 0)) {
        issues.push(issueFor(file, object, `container ${c.name} must set GATEWAY_STREAM_OPENS_PER_SECOND and GATEWAY_STREAM_OPEN_BURST (ConfigMap): the pod's open rate is what absorbs a reconnect storm`));
        continue;
      }
      if (burst < rate) issues.push(issueFor(file, object, `container ${c.name}: GATEWAY_STREAM_OPEN_BURST ${burst} is below GATEWAY_STREAM_OPENS_PER_SECOND ${rate}: a quiet pod could not admit one second's opens at once`));
      if (target !== undefined && rate * LOST_POD_SURVIVORS * LOST_POD_RECONNECT_S < target) {
        issues.push(issueFor(file, object, `container ${c.name}: GATEWAY_STREAM_OPENS_PER_SECOND ${rate} lets ${LOST_POD_SURVIVORS} pods take a lost pod's ${target} streams in ${Math.ceil(target / (rate * LOST_POD_SURVIVORS))} s, above ${LOST_POD_RECONNECT_S} s`));
      }
    }
  }
  return issues;
};

/** The HPA target of a Deployment's streams per pod, if it scales on them. */
function targetStreamsPerPod(ctx: RuleContext, deployment: string): number | undefined {
  const metric = hpaFor(ctx, deployment)?.spec.metrics?.find((m) => m.type === 'Pods');
  const value = quantity(metric?.pods?.target?.averageValue);
  return Number.isFinite(value) ? value : undefined;
}

/**
 * Every stage of the Dockerfile starts from an image pinned by digest (directly or through an ARG's
 * default), so a rebuild of the same commit gets the same base, and a moved upstream tag cannot
 * change what ships.
 */
export const baseImagePinned: Rule = (ctx) => {
  const path = join(ctx.repoRoot, 'Dockerfile');
  if (!existsSync(path)) return [];
  const text = readFileSync(path, 'utf8');
  const args = new Map([...text.matchAll(/^ARG\s+(\w+)=(\S+)/gm)].map((m) => [m[1]!, m[2]!]));
  const stages = new Set<string>();
  const unpinned = new Set<string>();
  const issues: Issue[] = [];
  for (const match of text.matchAll(/^FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?/gim)) {
    const image = match[1]!.replace(/^\$\{?(\w+)\}?$/, (_, name: string) => args.get(name) ?? `$${name}`);
    if (!stages.has(image) && !/@sha256:[0-9a-f]{64}$/.test(image) && !unpinned.has(image)) {
      unpinned.add(image);
      issues.push({ file: 'Dockerfile', message: `FROM ${match[1]} is ${image}, a mutable tag: pin the base image by digest (${image.split('@')[0]}@sha256:<digest>)` });
    }
    if (match[2]) stages.add(match[2]);
  }
  return issues;
};
