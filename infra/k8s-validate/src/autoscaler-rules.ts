/**
 * Rules for autoscaling on custom metrics: every Pods metric an autoscaler names is served by a
 * prometheus-adapter rule of the add-on folder, and that rule reads a gauge the scaled workload
 * exports (a counter or a misspelt name would leave the autoscaler without a value, and it would
 * then hold the replica count wherever it is).
 */
import { parse } from 'yaml';
import { EXPORTED_METRICS } from './exported-metrics.ts';
import { issueFor, ofKind, type Rule, type RuleContext } from './rule-context.ts';
import { ADDON_NAMESPACES } from './service-catalog.ts';
import type { Issue, KubeObject } from './issue.ts';

/** One prometheus-adapter rule: the series it reads and the metric name it serves. */
interface AdapterRule {
  series: string;
  served: string;
  overrides: Record<string, { resource?: string }>;
}

interface PodsMetric {
  type: string;
  pods?: { metric?: { name?: string }; target?: { type?: string } };
}

/**
 * The metric name an adapter rule serves for `series`: `name.matches` applied to it and replaced by
 * `name.as` (Go template `${1}` or `$1`; by default `$1` with a capture group, the whole name without).
 */
function servedName(series: string, name: { matches?: string; as?: string } | undefined): string {
  if (name?.matches === undefined) return name?.as ?? series;
  const pattern = new RegExp(name.matches);
  const match = pattern.exec(series);
  if (!match) return '';
  const template = name.as ?? (match.length > 1 ? '$1' : '$0');
  return template.replace(/\$\{?(\d+)\}?/g, (_, group: string) => match[Number(group)] ?? '');
}

/** The rules of every add-on ConfigMap with a prometheus-adapter `config.yaml`. */
export function adapterRules(ctx: RuleContext): { rules: AdapterRule[]; issues: Issue[] } {
  const rules: AdapterRule[] = [];
  const issues: Issue[] = [];
  for (const { file, object } of ctx.addons.filter((o) => o.object.kind === 'ConfigMap')) {
    const text = (object.data as Record<string, string> | undefined)?.['config.yaml'];
    if (text === undefined) continue;
    let parsed: { rules?: Array<{ seriesQuery?: string; name?: { matches?: string; as?: string }; resources?: { overrides?: AdapterRule['overrides'] } }> };
    try {
      parsed = parse(text) ?? {};
    } catch (err) {
      issues.push(issueFor(file, object, `config.yaml is not YAML: ${(err as Error).message.split('\n')[0]}`));
      continue;
    }
    for (const rule of parsed.rules ?? []) {
      const series = /^\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*(\{|$)/.exec(rule.seriesQuery ?? '')?.[1];
      if (!series) {
        issues.push(issueFor(file, object, `adapter rule ${JSON.stringify(rule.seriesQuery)} does not name one metric`));
        continue;
      }
      rules.push({ series, served: servedName(series, rule.name), overrides: rule.resources?.overrides ?? {} });
    }
  }
  return { rules, issues };
}

/** Each Pods metric of an autoscaler is served by an adapter rule over a gauge its target exports. */
export const podsMetricsServed: Rule = (ctx) => {
  const { rules, issues } = adapterRules(ctx);
  const deployments = new Map(ofKind(ctx, 'Deployment').map((d) => [d.object.metadata?.name, d.object]));
  for (const { file, object } of ofKind(ctx, 'HorizontalPodAutoscaler')) {
    const spec = object.spec as { scaleTargetRef: { name: string }; metrics?: PodsMetric[] };
    for (const metric of (spec.metrics ?? []).filter((m) => m.type === 'Pods')) {
      const name = metric.pods?.metric?.name ?? '';
      if (metric.pods?.target?.type !== 'AverageValue') issues.push(issueFor(file, object, `Pods metric ${name}: target must be an AverageValue (per pod)`));
      const rule = rules.find((r) => r.served === name);
      if (!rule) {
        issues.push(issueFor(file, object, `Pods metric ${name} is served by no prometheus-adapter rule (${Object.keys(ADDON_NAMESPACES).join(', ')})`));
        continue;
      }
      if (rule.overrides.pod?.resource !== 'pod' || rule.overrides.namespace?.resource !== 'namespace') {
        issues.push(issueFor(file, object, `Pods metric ${name}: its adapter rule must map the labels pod and namespace to those resources`));
      }
      const target: KubeObject | undefined = deployments.get(spec.scaleTargetRef.name);
      const component = target?.metadata?.labels?.['app.kubernetes.io/component'] ?? '';
      const exported = EXPORTED_METRICS[component]?.();
      const type = exported?.get(rule.series);
      if (type !== 'gauge') {
        const why = exported === undefined ? `${component || spec.scaleTargetRef.name} exports no known metrics` : type === undefined ? `${component} exports no metric of that name` : `it is a ${type}`;
        issues.push(issueFor(file, object, `Pods metric ${name} reads ${rule.series}, which is not a gauge of its target: ${why}`));
      }
    }
  }
  return issues;
};

/** Add-on objects live in their add-on's namespace (the application's namespace rule skips them). */
export const addonsInTheirNamespace: Rule = (ctx) =>
  ctx.addons.flatMap(({ file, object }) => {
    const namespace = ADDON_NAMESPACES[file.split('/')[0]!];
    return object.metadata?.namespace === namespace ? [] : [issueFor(file, object, `metadata.namespace must be ${namespace}`)];
  });
