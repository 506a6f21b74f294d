/**
 * Rules for monitoring as code (infra/k8s/monitoring): every series an alert, a recording rule or a
 * dashboard panel reads is one a workload exports (read from the services' own registries), read
 * with a function that fits its type; every alert says how urgent it is, what it means and where its
 * runbook is, and docs/operations.md lists exactly these alerts; the monitor scrapes the metrics
 * Service's admin port of every pod.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EXPORTED_METRICS, type MetricTypes } from './exported-metrics.ts';
import type { KustomizationFile } from './manifest-files.ts';
import { quantity } from './operability-rules.ts';
import { parsePromql, type SelectorUse } from './promql-selectors.ts';
import { containerEnv, issueFor, ofKind, type PodSpecView, type Rule, type RuleContext } from './rule-context.ts';
import { DEFAULT_MAX_CONNECTIONS, HPA_TOLERANCE } from './service-catalog.ts';
import { describe, type Issue, type KubeObject, type ManifestDocument } from './issue.ts';

/** Where the alerts' runbooks and their table are, relative to the repository root. */
export const OPERATIONS_DOC = 'docs/operations.md';

/** Series of the cluster's kube-state-metrics that alerts may read besides the workloads' own. */
const CLUSTER_METRICS: Readonly<Record<string, string>> = {
  kube_pod_container_status_restarts_total: 'counter',
  kube_pod_container_status_last_terminated_reason: 'gauge',
};

/** Severities an alert may carry: `page` wakes someone, `ticket` waits for working hours. */
const SEVERITIES = ['page', 'ticket'];

/** Functions that need a counter (or a histogram's `_bucket`/`_sum`/`_count` series). */
const COUNTER_FUNCTIONS = new Set(['rate', 'irate', 'increase', 'resets']);
/** Functions that need a gauge. */
const GAUGE_FUNCTIONS = new Set(['delta', 'idelta', 'deriv', 'predict_linear']);
const HISTOGRAM_SERIES = /^(.+)_(bucket|sum|count)$/;

interface RuleEntry {
  record?: string;
  alert?: string;
  expr?: string | number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** Every rule of every PrometheusRule, with where it is. */
export function promRules(ctx: RuleContext): Array<{ file: string; object: KubeObject; rule: RuleEntry }> {
  return ofKind(ctx, 'PrometheusRule').flatMap(({ file, object }) =>
    ((object.spec as { groups?: Array<{ rules?: RuleEntry[] }> }).groups ?? []).flatMap((g) => (g.rules ?? []).map((rule) => ({ file, object, rule }))),
  );
}

/** Every panel query of the Grafana dashboards (ConfigMaps labelled `grafana_dashboard: "1"`). */
function dashboardQueries(ctx: RuleContext): { queries: Array<{ file: string; object: KubeObject; where: string; expr: string }>; issues: Issue[]; dashboards: number } {
  const queries: Array<{ file: string; object: KubeObject; where: string; expr: string }> = [];
  const issues: Issue[] = [];
  let dashboards = 0;
  for (const { file, object } of ofKind(ctx, 'ConfigMap').filter((c) => c.object.metadata?.labels?.grafana_dashboard === '1')) {
    for (const [key, text] of Object.entries((object.data ?? {}) as Record<string, string>)) {
      let dashboard: { panels?: Panel[] };
      try {
        dashboard = JSON.parse(text) as { panels?: Panel[] };
      } catch (err) {
        issues.push(issueFor(file, object, `${key} is not JSON: ${(err as Error).message}`));
        continue;
      }
      dashboards++;
      const panels = (dashboard.panels ?? []).flatMap((p) => [p, ...(p.panels ?? [])]);
      for (const panel of panels) for (const target of panel.targets ?? []) if (target.expr) queries.push({ file, object, where: `${key} panel ${JSON.stringify(panel.title)}`, expr: target.expr });
    }
  }
  return { queries, issues, dashboards };
}

interface Panel {
  title?: string;
  panels?: Panel[];
  targets?: Array<{ expr?: string }>;
}

/** What a series name is: its type and the workloads that export it. */
type Resolved = { kind: 'recorded' } | { kind: 'exported'; type: string; histogramSeries: boolean } | { kind: 'missing'; why: string };

function resolve(use: SelectorUse, exported: Record<string, MetricTypes>, recorded: Set<string>): Resolved {
  if (recorded.has(use.name)) return { kind: 'recorded' };
  const workloads = use.job === undefined ? Object.keys(exported) : [use.job];
  if (use.job !== undefined && !exported[use.job]) return { kind: 'missing', why: `job="${use.job}" is no workload that exports metrics (${Object.keys(exported).join(', ')})` };
  for (const workload of workloads) {
    const types = exported[workload]!;
    const direct = types.get(use.name);
    if (direct === 'histogram') return { kind: 'missing', why: `it is a histogram, exported only as ${use.name}_bucket, _sum and _count` };
    if (direct !== undefined) return { kind: 'exported', type: direct, histogramSeries: false };
    const base = HISTOGRAM_SERIES.exec(use.name)?.[1];
    if (base !== undefined && types.get(base) === 'histogram') return { kind: 'exported', type: 'histogram', histogramSeries: true };
  }
  if (use.job === undefined && CLUSTER_METRICS[use.name]) return { kind: 'exported', type: CLUSTER_METRICS[use.name]!, histogramSeries: false };
  return { kind: 'missing', why: use.job === undefined ? 'no workload exports it' : `${use.job} does not export it` };
}

/** What is wrong with reading `use` as it is read, or undefined. */
function misuse(use: SelectorUse, resolved: Extract<Resolved, { kind: 'exported' }>): string | undefined {
  const counting = resolved.type === 'counter' || resolved.histogramSeries;
  if (use.fn && COUNTER_FUNCTIONS.has(use.fn) && !counting) return `${use.fn}() over a ${resolved.type}: it needs a counter (a gauge goes down as well as up)`;
  if (use.fn && GAUGE_FUNCTIONS.has(use.fn) && resolved.type !== 'gauge') return `${use.fn}() over a ${resolved.type}: it needs a gauge (use rate() or increase())`;
  if (use.enclosing.includes('histogram_quantile') && !(resolved.histogramSeries && use.name.endsWith('_bucket'))) return 'histogram_quantile() needs a histogram\'s _bucket series';
  return undefined;
}

/**
 * Every series an alert, a recording rule or a dashboard panel reads is exported by a workload (the
 * one its `job` matcher names, when it has one) or recorded by a rule, with the type its function
 * needs; and the alerts and the dashboard exist at all.
 */
export const monitoringReadsExportedMetrics: Rule = (ctx) => {
  const rules = promRules(ctx);
  const dashboards = dashboardQueries(ctx);
  const issues: Issue[] = [...dashboards.issues];
  if (rules.length === 0) issues.push({ file: 'monitoring', message: `no PrometheusRule: the alerts of ${OPERATIONS_DOC} are not code (infra/k8s/monitoring)` });
  if (dashboards.dashboards === 0) issues.push({ file: 'monitoring', message: 'no Grafana dashboard: a ConfigMap labelled grafana_dashboard: "1" with the dashboard\'s JSON' });
  const exported = Object.fromEntries(Object.entries(EXPORTED_METRICS).map(([workload, types]) => [workload, types()]));
  const recorded = new Set(rules.flatMap(({ rule }) => (rule.record ? [rule.record] : [])));
  const queries = [
    ...rules.map(({ file, object, rule }) => ({ file, object, where: rule.alert ? `alert ${rule.alert}` : `record ${rule.record}`, expr: String(rule.expr ?? '') })),
    ...dashboards.queries,
  ];
  for (const { file, object, where, expr } of queries) {
    const parsed = parsePromql(expr);
    if (!parsed.ok) {
      issues.push(issueFor(file, object, `${where}: not PromQL (syntax error at ${parsed.at}): ${expr}`));
      continue;
    }
    for (const use of parsed.selectors) {
      if (use.name === '') {
        issues.push(issueFor(file, object, `${where}: a selector without a metric name reads every series`));
        continue;
      }
      const resolved = resolve(use, exported, recorded);
      const wrong = resolved.kind === 'missing' ? resolved.why : resolved.kind === 'exported' ? misuse(use, resolved) : undefined;
      if (wrong) issues.push(issueFor(file, object, `${where} reads ${use.name}: ${wrong}`));
    }
  }
  return issues;
};

/** The anchors of a markdown file's headings, as GitHub makes them. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const [, text] of markdown.matchAll(/^#{1,6} +(.+?) *$/gm)) {
    const base = text!.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** The alert table of docs/operations.md: each row's alert name (its first cell, in backticks) and the row. */
function documentedAlerts(markdown: string): Map<string, string> {
  const section = /^## Metrics and alerts$([\s\S]*?)(?=^## )/m.exec(markdown)?.[1] ?? '';
  return new Map([...section.matchAll(/^\| `([A-Z][A-Za-z0-9]*)` \|.*$/gm)].map((m) => [m[1]!, m[0]]));
}

/**
 * Every alert has a severity (page or ticket), a summary and a runbook_url whose anchor is a heading
 * of docs/operations.md; the document's alert table has one row per alert, no other, each linking
 * that runbook.
 */
export const alertsHaveRunbooks: Rule = (ctx) => {
  const path = join(ctx.repoRoot, OPERATIONS_DOC);
  const markdown = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const anchors = headingAnchors(markdown);
  const documented = documentedAlerts(markdown);
  const alerts = promRules(ctx).filter(({ rule }) => rule.alert !== undefined);
  const issues: Issue[] = [];
  if (alerts.length === 0) issues.push({ file: 'monitoring', message: `no PrometheusRule holds the alerts ${OPERATIONS_DOC} lists (${documented.size} rows)` });
  for (const { file, object, rule } of alerts) {
    const name = rule.alert!;
    const severity = rule.labels?.severity;
    if (!SEVERITIES.includes(severity ?? '')) issues.push(issueFor(file, object, `alert ${name}: labels.severity must be one of ${SEVERITIES.join(', ')} (has ${JSON.stringify(severity ?? null)})`));
    if (!rule.annotations?.summary?.trim()) issues.push(issueFor(file, object, `alert ${name}: annotations.summary must say what is wrong`));
    const anchor = new RegExp(`/${OPERATIONS_DOC.replace('.', '\\.')}#([^#/]+)$`).exec(rule.annotations?.runbook_url ?? '')?.[1];
    if (anchor === undefined) issues.push(issueFor(file, object, `alert ${name}: annotations.runbook_url must point at a heading of ${OPERATIONS_DOC} (…/${OPERATIONS_DOC}#anchor)`));
    else if (!anchors.has(anchor)) issues.push(issueFor(file, object, `alert ${name}: runbook_url's anchor #${anchor} is no heading of ${OPERATIONS_DOC}`));
    const row = documented.get(name);
    if (row === undefined) issues.push(issueFor(file, object, `alert ${name} has no row in ${OPERATIONS_DOC}'s alert table ("Metrics and alerts")`));
    else if (anchor !== undefined && !row.includes(`(#${anchor})`)) issues.push({ file: OPERATIONS_DOC, message: `the row of alert ${name} must link its runbook (#${anchor})` });
  }
  const names = new Set(alerts.map(({ rule }) => rule.alert));
  for (const name of documented.keys()) if (alerts.length > 0 && !names.has(name)) issues.push({ file: OPERATIONS_DOC, message: `alert table row ${name} is no alert of the PrometheusRule` });
  return issues;
};

interface MonitorEndpoint {
  port?: string;
  relabelings?: Array<{ sourceLabels?: string[]; targetLabel?: string; action?: string }>;
}

/** The relabeling that makes the pod's component label the series' `job`, which the rules select on. */
const JOB_FROM_COMPONENT = '__meta_kubernetes_pod_label_app_kubernetes_io_component';

function matches(selector: { matchLabels?: Record<string, string> } | undefined, labels: Record<string, string> | undefined): boolean {
  return Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels?.[k] === v);
}

/**
 * A ServiceMonitor selects the headless metrics Service (the one over every pod's `admin` port) and
 * scrapes that port, with the pod's component label as `job`: the alerts and the dashboard select
 * workloads by it.
 */
export const monitorScrapesAdminPorts: Rule = (ctx) => {
  const monitors = ofKind(ctx, 'ServiceMonitor');
  if (monitors.length === 0) return [{ file: 'monitoring', message: 'no ServiceMonitor scrapes the pods\' admin ports (the headless Service repo-chat-metrics): Prometheus has no metrics to alert on' }];
  const services = ofKind(ctx, 'Service');
  return monitors.flatMap(({ file, object }) => {
    const spec = object.spec as { selector?: { matchLabels?: Record<string, string> }; endpoints?: MonitorEndpoint[] };
    const selected = services.filter((s) => s.object.metadata?.namespace === object.metadata?.namespace && matches(spec.selector, s.object.metadata?.labels));
    const metrics = selected.find((s) => (s.object.spec as { clusterIP?: string }).clusterIP === 'None');
    if (!metrics) return [issueFor(file, object, `selects no headless metrics Service of namespace ${object.metadata?.namespace} (selector ${JSON.stringify(spec.selector?.matchLabels ?? {})})`)];
    const ports = ((metrics.object.spec as { ports?: Array<{ name?: string; targetPort?: unknown }> }).ports ?? []).filter((p) => p.targetPort === 'admin').map((p) => p.name);
    return (spec.endpoints ?? []).flatMap((endpoint, i) => {
      const issues: Issue[] = [];
      if (!ports.includes(endpoint.port)) issues.push(issueFor(file, object, `endpoint ${i} scrapes port ${JSON.stringify(endpoint.port ?? null)}; Service ${metrics.object.metadata?.name}'s port to the pods' admin port is ${JSON.stringify(ports[0] ?? null)}`));
      const job = endpoint.relabelings?.some((r) => r.targetLabel === 'job' && r.sourceLabels?.length === 1 && r.sourceLabels[0] === JOB_FROM_COMPONENT && (r.action ?? 'replace').toLowerCase() === 'replace');
      if (!job) issues.push(issueFor(file, object, `endpoint ${i} must set job from the pod's app.kubernetes.io/component label (relabelings: sourceLabels [${JOB_FROM_COMPONENT}], targetLabel job): the alerts select workloads by job`));
      return issues;
    });
  });
};

/**
 * The monitoring objects (the operator's kinds, the dashboard) are applied by a kustomization of
 * their own, never the application's: `kubectl apply -k infra/k8s` must work in a cluster without
 * the Prometheus operator's CRDs, and there is one to apply where it runs.
 */
export function checkMonitoringApart(kustomizations: KustomizationFile[], documents: ManifestDocument[]): Issue[] {
  const monitoring = documents.filter((d) => {
    const object = d.value as KubeObject;
    return String(object.apiVersion).startsWith('monitoring.coreos.com/') || (object.kind === 'ConfigMap' && object.metadata?.labels?.grafana_dashboard === '1');
  });
  if (!monitoring.some((d) => (d.value as KubeObject).kind === 'PrometheusRule')) {
    return [{ file: 'monitoring', message: 'no monitoring kustomization: a folder (infra/k8s/monitoring) whose kustomization applies the ServiceMonitor, the PrometheusRule and the dashboard where the Prometheus operator runs' }];
  }
  const issues: Issue[] = [];
  for (const doc of monitoring) {
    if (kustomizations.some((k) => k.dir === '' && (k.file === doc.file || listedBy(k, doc.file)))) issues.push({ file: doc.file, object: describe(doc.value as KubeObject), message: 'is applied by the application\'s kustomization: give the monitoring objects a kustomization of their own, applied only where the Prometheus operator runs' });
  }
  return issues;
}

function listedBy(k: KustomizationFile, file: string): boolean {
  const resources = (k.value as { resources?: unknown } | undefined)?.resources;
  return Array.isArray(resources) && resources.some((r) => typeof r === 'string' && (k.dir ? `${k.dir}/${r}` : r) === file);
}

/**
 * The "gateway full" alert fires near the connection cap: above where the autoscaler lets pods sit
 * (its target plus its tolerance, normal load) and below HTTP_MAX_CONNECTIONS, where pods start
 * refusing connections.
 */
export const gatewayFullAlertNearCap: Rule = (ctx) => {
  const gateway = ofKind(ctx, 'Deployment').find((d) => d.object.metadata?.labels?.['app.kubernetes.io/component'] === 'stream-gateway');
  if (!gateway) return [];
  const container = (gateway.object.spec as { template: { spec: PodSpecView } }).template.spec.containers[0]!;
  const configured = containerEnv(ctx, container).get('HTTP_MAX_CONNECTIONS');
  const cap = typeof configured === 'string' ? Number(configured) : DEFAULT_MAX_CONNECTIONS;
  const hpa = ofKind(ctx, 'HorizontalPodAutoscaler').find((h) => (h.object.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name === gateway.object.metadata?.name);
  const metric = ((hpa?.object.spec as { metrics?: Array<{ type: string; pods?: { metric?: { name?: string }; target?: { averageValue?: string | number } } }> } | undefined)?.metrics ?? []).find(
    (m) => m.type === 'Pods' && m.pods?.metric?.name === 'chat_gateway_streams_open',
  );
  const normal = quantity(metric?.pods?.target?.averageValue) * (1 + HPA_TOLERANCE);
  const alerts = promRules(ctx).flatMap(({ file, object, rule }) => {
    const threshold = /chat_gateway_streams_open\b[^>]*>\s*([0-9_]+)/.exec(rule.alert ? String(rule.expr) : '')?.[1];
    return threshold === undefined ? [] : [{ file, object, name: rule.alert!, threshold: Number(threshold.replaceAll('_', '')) }];
  });
  if (alerts.length === 0) return [{ file: 'monitoring', message: `no alert fires as a gateway nears its connection cap (chat_gateway_streams_open > N, HTTP_MAX_CONNECTIONS ${cap})` }];
  return alerts
    .filter((a) => !(a.threshold < cap && (Number.isNaN(normal) || a.threshold > normal)))
    .map((a) => issueFor(a.file, a.object, `alert ${a.name} fires at ${a.threshold} streams: it must fire above the autoscaler's normal load (${Math.round(normal)}: target plus ${HPA_TOLERANCE * 100} %) and below HTTP_MAX_CONNECTIONS ${cap}`));
};
