import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { EXPORTED_METRICS } from './exported-metrics.ts';
import { formatIssue, type KubeObject, type ManifestDocument } from './issue.ts';
import { headingAnchors } from './monitoring-rules.ts';
import { parsePromql } from './promql-selectors.ts';
import { committedDocuments, MANIFEST_DIR, REPO_ROOT, withChange } from './test-support.ts';
import { validateDocuments, validateManifestDirectory } from './validate-manifests.ts';

const messages = (docs: ManifestDocument[]) => validateDocuments(docs, REPO_ROOT).map(formatIssue);
/** infra/k8s as it was before monitoring was code: each rule must fail on it. */
const BEFORE = fileURLToPath(new URL('../fixtures/k8s-before', import.meta.url));
const RULE = 'monitoring/prometheus-rule.yaml PrometheusRule/repo-chat';

/** Changes the rule named `alert` of the committed PrometheusRule. */
function withAlert(docs: ManifestDocument[], alert: string, change: (rule: Record<string, any>) => void): ManifestDocument[] {
  return withChange(docs, 'PrometheusRule', 'repo-chat', (r) => {
    const rule = r.spec.groups.flatMap((g: { rules: Array<Record<string, any>> }) => g.rules).find((x: { alert?: string }) => x.alert === alert);
    if (!rule) throw new Error(`no alert ${alert}`);
    change(rule);
  });
}

/** Every expression of the committed rules and dashboard. */
function expressions(docs: ManifestDocument[]): string[] {
  const objects = docs.map((d) => d.value as KubeObject);
  const rules = objects
    .filter((o) => o.kind === 'PrometheusRule')
    .flatMap((o) => (o.spec as { groups: Array<{ rules: Array<{ expr: string }> }> }).groups.flatMap((g) => g.rules.map((r) => r.expr)));
  const panels = objects
    .filter((o) => o.kind === 'ConfigMap' && o.metadata?.labels?.grafana_dashboard === '1')
    .flatMap((o) => Object.values(o.data as Record<string, string>).flatMap((json) => (JSON.parse(json) as { panels: Array<{ targets: Array<{ expr: string }> }> }).panels))
    .flatMap((p) => p.targets.map((t) => t.expr));
  return [...rules, ...panels];
}

describe('monitoring rules (metrics, alerts and runbooks, the monitor)', () => {
  let docs: ManifestDocument[];
  let beforeIssues: string[];
  before(async () => {
    docs = await committedDocuments();
    beforeIssues = (await validateManifestDirectory(BEFORE, REPO_ROOT)).issues.map(formatIssue);
  });

  it('accepts the committed manifests, the dashboard generated from its JSON file among them', async () => {
    expect((await validateManifestDirectory(MANIFEST_DIR, REPO_ROOT)).issues.map(formatIssue)).to.deep.equal([]);
    const dashboard = docs.find((d) => (d.value as KubeObject).kind === 'ConfigMap' && (d.value as KubeObject).metadata?.name === 'repo-chat-dashboard')!;
    expect(dashboard.file).to.equal('monitoring/kustomization.yaml');
    expect((dashboard.value as { data: Record<string, string> }).data['grafana-dashboard.json']).to.equal(await readFile(join(MANIFEST_DIR, 'monitoring/grafana-dashboard.json'), 'utf8'));
  });

  it("finds every series the rules and the dashboard read in the services' own registries", () => {
    const registries = Object.values(EXPORTED_METRICS).map((types) => types());
    const exported = (name: string) => registries.some((types) => types.has(name) || types.get(name.replace(/_(bucket|sum|count)$/, '')) === 'histogram');
    const names = new Set(expressions(docs).flatMap((expr) => (parsePromql(expr) as { selectors: Array<{ name: string }> }).selectors.map((s) => s.name)));
    const missing = [...names].filter((name) => !exported(name) && !name.includes(':') && !name.startsWith('kube_'));
    expect(missing).to.deep.equal([]);
    for (const name of ['chat_gateway_delivery_latency_seconds_bucket', 'chat_gateway_backbone_lag_seconds_bucket', 'chat_db_pool_waiting_requests', 'chat_outbox_depth', 'chat_notifier_webhook_backlog']) {
      expect(names, name).to.include(name);
    }
  });

  describe('each fails on the manifests before them', () => {
    it('no PrometheusRule, no dashboard, no monitor, no kustomization to apply them, no alert near the connection cap', () => {
      expect(beforeIssues).to.include.members([
        'monitoring: no PrometheusRule: the alerts of docs/operations.md are not code (infra/k8s/monitoring)',
        'monitoring: no Grafana dashboard: a ConfigMap labelled grafana_dashboard: "1" with the dashboard\'s JSON',
        "monitoring: no ServiceMonitor scrapes the pods' admin ports (the headless Service repo-chat-metrics): Prometheus has no metrics to alert on",
        'monitoring: no monitoring kustomization: a folder (infra/k8s/monitoring) whose kustomization applies the ServiceMonitor, the PrometheusRule and the dashboard where the Prometheus operator runs',
        'monitoring: no alert fires as a gateway nears its connection cap (chat_gateway_streams_open > N, HTTP_MAX_CONNECTIONS 20000)',
      ]);
      expect(beforeIssues.some((i) => i.startsWith('monitoring: no PrometheusRule holds the alerts docs/operations.md lists'))).to.equal(true);
    });
  });

  describe('exported metrics, by the type their function needs', () => {
    it('refuses a series no workload exports, and one its job does not', () => {
      const typo = withAlert(docs, 'OutboxStuck', (r) => (r.expr = 'max(chat_outbox_dept{job="api"}) > 1000'));
      expect(messages(typo)).to.include(`${RULE}: alert OutboxStuck reads chat_outbox_dept: api does not export it`);
      const elsewhere = withAlert(docs, 'OutboxStuck', (r) => (r.expr = 'max(chat_outbox_depth{job="notifier"}) > 1000'));
      expect(messages(elsewhere)).to.include(`${RULE}: alert OutboxStuck reads chat_outbox_depth: notifier does not export it`);
    });

    it('refuses rate() or increase() over a gauge (the dead-letter sketch the docs had), delta() over a counter, and a quantile of anything but buckets', () => {
      const sketch = withAlert(docs, 'NotifierDeadLetters', (r) => (r.expr = 'increase(chat_notifier_fanout_rows{state="dead"}[1h]) > 0'));
      expect(messages(sketch)).to.include(`${RULE}: alert NotifierDeadLetters reads chat_notifier_fanout_rows: increase() over a gauge: it needs a counter (a gauge goes down as well as up)`);
      const delta = withAlert(docs, 'CoreFailing', (r) => (r.expr = 'sum(delta(chat_appends_total[5m])) > 0'));
      expect(messages(delta)).to.include(`${RULE}: alert CoreFailing reads chat_appends_total: delta() over a counter: it needs a gauge (use rate() or increase())`);
      const quantile = withAlert(docs, 'AppendLatencyHigh', (r) => (r.expr = 'histogram_quantile(0.99, sum(rate(chat_http_request_duration_seconds_count[5m]))) > 0.5'));
      expect(messages(quantile)).to.include(`${RULE}: alert AppendLatencyHigh reads chat_http_request_duration_seconds_count: histogram_quantile() needs a histogram's _bucket series`);
      const bare = withAlert(docs, 'AppendLatencyHigh', (r) => (r.expr = 'rate(chat_gateway_delivery_latency_seconds[5m]) > 1'));
      expect(messages(bare)).to.include(`${RULE}: alert AppendLatencyHigh reads chat_gateway_delivery_latency_seconds: it is a histogram, exported only as chat_gateway_delivery_latency_seconds_bucket, _sum and _count`);
    });

    it("reads the dashboard's panels too, and refuses what is not PromQL", () => {
      const panel = withChange(docs, 'ConfigMap', 'repo-chat-dashboard', (c) => {
        const dashboard = JSON.parse(c.data['grafana-dashboard.json']);
        dashboard.panels[0].targets[0].expr = 'sum(rate(chat_gateway_streams_open[$__rate_interval]))';
        c.data['grafana-dashboard.json'] = JSON.stringify(dashboard);
      });
      expect(messages(panel)).to.include(
        'monitoring/kustomization.yaml ConfigMap/repo-chat-dashboard: grafana-dashboard.json panel "Streams open" reads chat_gateway_streams_open: rate() over a gauge: it needs a counter (a gauge goes down as well as up)',
      );
      const broken = withAlert(docs, 'CoreFailing', (r) => (r.expr = 'sum(rate(chat_core_call_duration_seconds_count[5m]) > 0'));
      expect(messages(broken).join('\n')).to.contain('alert CoreFailing: not PromQL (syntax error at');
    });
  });

  describe('alerts and runbooks', () => {
    it('refuses an alert without severity or summary, and a runbook_url whose anchor is no heading', () => {
      const bare = withAlert(docs, 'SlowConsumers', (r) => {
        delete r.labels.severity;
        delete r.annotations.summary;
        r.annotations.runbook_url = 'https://github.com/example/repo-chat/blob/main/docs/operations.md#no-such-runbook';
      });
      expect(messages(bare)).to.include.members([
        `${RULE}: alert SlowConsumers: labels.severity must be one of page, ticket (has null)`,
        `${RULE}: alert SlowConsumers: annotations.summary must say what is wrong`,
        `${RULE}: alert SlowConsumers: runbook_url's anchor #no-such-runbook is no heading of docs/operations.md`,
      ]);
      const elsewhere = withAlert(docs, 'SlowConsumers', (r) => (r.annotations.runbook_url = 'https://wiki.example.com/slow-consumers'));
      expect(messages(elsewhere)).to.include(`${RULE}: alert SlowConsumers: annotations.runbook_url must point at a heading of docs/operations.md (…/docs/operations.md#anchor)`);
    });

    it("refuses an alert the docs' table does not list", () => {
      const renamed = withAlert(docs, 'SlowConsumers', (r) => (r.alert = 'SlowClients'));
      expect(messages(renamed)).to.include.members([
        `${RULE}: alert SlowClients has no row in docs/operations.md's alert table ("Metrics and alerts")`,
        'docs/operations.md: alert table row SlowConsumers is no alert of the PrometheusRule',
      ]);
    });

    it('makes anchors as GitHub does', () => {
      expect([...headingAnchors('## Metrics and alerts\n### Cursor key rotation (`CURSOR_SECRET`)\n### Gateway OOMKilled\n## Metrics and alerts\n')]).to.deep.equal([
        'metrics-and-alerts',
        'cursor-key-rotation-cursor_secret',
        'gateway-oomkilled',
        'metrics-and-alerts-1',
      ]);
    });

    it('refuses a "gateway full" alert at the autoscaler\'s normal load or past the connection cap', () => {
      for (const threshold of [16000, 20000]) {
        const moved = withAlert(docs, 'GatewayNearConnectionCap', (r) => (r.expr = `max(chat_gateway_streams_open{job="stream-gateway"}) > ${threshold}`));
        expect(messages(moved)).to.include(
          `${RULE}: alert GatewayNearConnectionCap fires at ${threshold} streams: it must fire above the autoscaler's normal load (17600: target plus 10 %) and below HTTP_MAX_CONNECTIONS 20000`,
        );
      }
    });
  });

  describe('the monitor and its kustomization', () => {
    const MONITOR = 'monitoring/service-monitor.yaml ServiceMonitor/repo-chat';

    it("refuses a monitor on another port, without the job relabeling, or selecting no metrics Service", () => {
      const port = withChange(docs, 'ServiceMonitor', 'repo-chat', (m) => (m.spec.endpoints[0].port = 'http'));
      expect(messages(port)).to.include(`${MONITOR}: endpoint 0 scrapes port "http"; Service repo-chat-metrics's port to the pods' admin port is "admin"`);
      const job = withChange(docs, 'ServiceMonitor', 'repo-chat', (m) => delete m.spec.endpoints[0].relabelings);
      expect(messages(job).join('\n')).to.contain(`${MONITOR}: endpoint 0 must set job from the pod's app.kubernetes.io/component label`);
      const selector = withChange(docs, 'ServiceMonitor', 'repo-chat', (m) => (m.spec.selector.matchLabels['app.kubernetes.io/component'] = 'api'));
      expect(messages(selector).join('\n')).to.contain(`${MONITOR}: selects no headless metrics Service of namespace repo-chat`);
    });

    it('refuses an unknown field of the operator\'s kinds', () => {
      const typo = withChange(docs, 'ServiceMonitor', 'repo-chat', (m) => (m.spec.endpoints[0].intervall = '30s'));
      expect(messages(typo)).to.include(`${MONITOR}: schema: unknown field /spec/endpoints/0/intervall`);
    });

    it("refuses monitoring objects in the application's kustomization, and a dashboard ConfigMap whose name would change at each edit", async () => {
      const dir = await mkdtemp(join(tmpdir(), 'k8s-tree-'));
      await cp(MANIFEST_DIR, dir, { recursive: true });
      const root = join(dir, 'kustomization.yaml');
      await writeFile(root, (await readFile(root, 'utf8')).replace('resources:\n', 'resources:\n  - monitoring/service-monitor.yaml\n'));
      const monitoring = join(dir, 'monitoring/kustomization.yaml');
      await writeFile(monitoring, (await readFile(monitoring, 'utf8')).replace('      disableNameSuffixHash: true\n', ''));
      const issues = (await validateManifestDirectory(dir, REPO_ROOT)).issues.map(formatIssue);
      expect(issues).to.include.members([
        "monitoring/service-monitor.yaml ServiceMonitor/repo-chat: is applied by the application's kustomization: give the monitoring objects a kustomization of their own, applied only where the Prometheus operator runs",
        'monitoring/kustomization.yaml: configMapGenerator "repo-chat-dashboard": set options.disableNameSuffixHash: true, so an edit replaces the ConfigMap instead of adding one',
      ]);
    });
  });
});
