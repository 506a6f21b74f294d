/**
 * Rules for the long-running Deployments: probes on the admin port, a termination grace period
 * that covers preStop plus the drain window, and an autoscaler and a disruption budget for each.
 */
import { configData, issueFor, ofKind, workloads, type ContainerView, type ProbeView, type Rule } from './rule-context.ts';
import { GRACE_MARGIN_MS, WORKLOADS } from './service-catalog.ts';
import type { Issue } from './issue.ts';

function deployments(ctx: Parameters<Rule>[0]) {
  return workloads(ctx).filter((w) => w.object.kind === 'Deployment');
}

function componentOf(labels: Record<string, string> | undefined): string {
  return labels?.['app.kubernetes.io/component'] ?? '';
}

/** Liveness on /healthz and readiness on /readyz, both on the container port `admin` = the configured admin port. */
export const probesOnAdminPort: Rule = (ctx) => {
  const config = configData(ctx);
  return deployments(ctx).flatMap(({ file, object, pod }) => {
    const spec = WORKLOADS[componentOf(object.metadata?.labels)];
    if (!spec?.adminPortKey) return [];
    const configured = Number(config[spec.adminPortKey]);
    if (!Number.isInteger(configured) || configured <= 0) {
      return [issueFor(file, object, `ConfigMap must set ${spec.adminPortKey} (the admin port the probes use)`)];
    }
    return pod.containers.flatMap((c) => {
      const issues: Issue[] = [];
      const admin = c.ports?.find((p) => p.name === 'admin');
      if (admin?.containerPort !== configured) {
        issues.push(issueFor(file, object, `container ${c.name} needs a port named admin = ${spec.adminPortKey} (${configured})`));
      }
      const check = (probe: ProbeView | undefined, kind: string, path: string) => {
        const get = probe?.httpGet;
        const onAdmin = get !== undefined && (get.port === 'admin' || get.port === configured);
        if (!get || get.path !== path || !onAdmin) issues.push(issueFor(file, object, `container ${c.name} needs ${kind} httpGet ${path} on the admin port`));
      };
      check(c.livenessProbe, 'livenessProbe', '/healthz');
      check(c.readinessProbe, 'readinessProbe', '/readyz');
      return issues;
    });
  });
};

function preStopMs(c: ContainerView): number | undefined {
  const preStop = c.lifecycle?.preStop;
  if (preStop?.sleep) return preStop.sleep.seconds * 1000;
  const command = preStop?.exec?.command;
  if (command?.length === 2 && command[0] === 'sleep' && /^\d+$/.test(command[1]!)) return Number(command[1]) * 1000;
  return undefined;
}

/** terminationGracePeriodSeconds exceeds preStop sleep + drain window + margin, so SIGKILL never cuts a drain. */
export const graceCoversDrain: Rule = (ctx) => {
  const config = configData(ctx);
  return deployments(ctx).flatMap(({ file, object, pod }) => {
    const drain = WORKLOADS[componentOf(object.metadata?.labels)]?.drain;
    if (!drain) return [];
    let drainMs: number;
    if ('key' in drain) {
      drainMs = Number(config[drain.key]);
      if (config[drain.key] === undefined || !Number.isFinite(drainMs)) return [issueFor(file, object, `ConfigMap must set ${drain.key} (its drain window)`)];
    } else {
      drainMs = drain.fixedMs;
    }
    const graceMs = (pod.terminationGracePeriodSeconds ?? 30) * 1000;
    return pod.containers.flatMap((c) => {
      const sleepMs = preStopMs(c);
      if (sleepMs === undefined) return [issueFor(file, object, `container ${c.name} needs a preStop sleep (exec ["sleep", "N"] or sleep.seconds)`)];
      const needed = sleepMs + drainMs + GRACE_MARGIN_MS;
      return graceMs < needed
        ? [issueFor(file, object, `terminationGracePeriodSeconds ${graceMs / 1000} s is below preStop ${sleepMs / 1000} s + drain ${drainMs / 1000} s + margin ${GRACE_MARGIN_MS / 1000} s`)]
        : [];
    });
  });
};

function selects(selector: { matchLabels?: Record<string, string> } | undefined, labels: Record<string, string>): boolean {
  const match = selector?.matchLabels;
  return match !== undefined && Object.keys(match).length > 0 && Object.entries(match).every(([k, v]) => labels[k] === v);
}

/** Each Deployment has an HPA (min ≥ 2) and a PDB, and sets no `replicas` for `kubectl apply` to reset. */
export const scaledAndProtected: Rule = (ctx) => {
  const hpas = ofKind(ctx, 'HorizontalPodAutoscaler').map((h) => h.object.spec as { scaleTargetRef: { kind: string; name: string }; minReplicas?: number });
  const pdbs = ofKind(ctx, 'PodDisruptionBudget').map((p) => p.object.spec as { selector?: { matchLabels?: Record<string, string> } });
  return deployments(ctx).flatMap(({ file, object, podLabels }) => {
    const issues: Issue[] = [];
    const hpa = hpas.find((h) => h.scaleTargetRef.kind === 'Deployment' && h.scaleTargetRef.name === object.metadata?.name);
    if (!hpa) issues.push(issueFor(file, object, 'no HorizontalPodAutoscaler targets it'));
    else if ((hpa.minReplicas ?? 1) < 2) issues.push(issueFor(file, object, 'its HorizontalPodAutoscaler allows fewer than 2 replicas'));
    if (hpa && (object.spec as { replicas?: number }).replicas !== undefined) {
      issues.push(issueFor(file, object, 'sets spec.replicas although an autoscaler owns it (each apply would reset the scale)'));
    }
    if (!pdbs.some((p) => selects(p.selector, podLabels))) issues.push(issueFor(file, object, 'no PodDisruptionBudget selects its pods'));
    return issues;
  });
};
