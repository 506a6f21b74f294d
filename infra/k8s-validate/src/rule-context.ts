import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, type Issue, type KubeObject, type ManifestDocument } from './issue.ts';
import { ADDON_NAMESPACES } from './service-catalog.ts';

/**
 * What every rule reads: the application's objects (already schema-valid), the cluster add-ons'
 * objects (folders of ADDON_NAMESPACES, in their own namespaces), their files and the repository.
 */
export interface RuleContext {
  objects: Array<{ file: string; object: KubeObject }>;
  addons: Array<{ file: string; object: KubeObject }>;
  repoRoot: string;
}

export type Rule = (ctx: RuleContext) => Issue[];

/** The add-on folder a manifest file belongs to, if any. */
export function addonOf(file: string): string | undefined {
  const folder = file.split('/')[0]!;
  return file.includes('/') && folder in ADDON_NAMESPACES ? folder : undefined;
}

export function buildContext(documents: ManifestDocument[], repoRoot: string): RuleContext {
  const all = documents.map((d) => ({ file: d.file, object: d.value as KubeObject }));
  return { objects: all.filter((o) => addonOf(o.file) === undefined), addons: all.filter((o) => addonOf(o.file) !== undefined), repoRoot };
}

export function ofKind(ctx: RuleContext, kind: string): Array<{ file: string; object: KubeObject }> {
  return ctx.objects.filter((o) => o.object.kind === kind);
}

/** Merged `data` of every ConfigMap (there is one today; more would be merged in file order). */
export function configData(ctx: RuleContext): Record<string, string> {
  return Object.assign({}, ...ofKind(ctx, 'ConfigMap').map((c) => (c.object.data ?? {}) as Record<string, string>));
}

/** Each Secret's keys (the Secrets are templates: their `stringData` names every key). */
export function secretKeys(ctx: RuleContext): Map<string | undefined, string[]> {
  return new Map(ofKind(ctx, 'Secret').map((s) => [s.object.metadata?.name, Object.keys((s.object.stringData ?? {}) as object)]));
}

/**
 * The environment a container starts with, as far as the manifests decide it: the keys of the
 * ConfigMaps it takes whole (`envFrom`), overridden by its literal `env` values; a variable from a
 * Secret maps to `{ secret, key }`.
 */
export function containerEnv(ctx: RuleContext, c: ContainerView): Map<string, string | { secret: string; key: string }> {
  const env = new Map<string, string | { secret: string; key: string }>();
  const configMaps = new Map(ofKind(ctx, 'ConfigMap').map((m) => [m.object.metadata?.name, (m.object.data ?? {}) as Record<string, string>]));
  const secrets = secretKeys(ctx);
  for (const from of c.envFrom ?? []) {
    if (from.configMapRef) for (const [k, v] of Object.entries(configMaps.get(from.configMapRef.name) ?? {})) env.set(k, v);
    if (from.secretRef) for (const k of secrets.get(from.secretRef.name) ?? []) env.set(k, { secret: from.secretRef.name, key: k });
  }
  for (const e of c.env ?? []) {
    if (e.value !== undefined) env.set(e.name, e.value);
    const ref = e.valueFrom?.secretKeyRef;
    if (ref) env.set(e.name, { secret: ref.name, key: ref.key });
  }
  return env;
}

/** An issue about `object` in `file`. */
export function issueFor(file: string, object: KubeObject, message: string): Issue {
  return { file, object: describe(object), message };
}

/** Name and scripts of a workspace package, or undefined when the package does not exist. */
export function packageManifest(repoRoot: string, packageDir: string): { name: string; scripts: Record<string, string> } | undefined {
  const path = join(repoRoot, packageDir, 'package.json');
  if (!existsSync(path)) return undefined;
  const pkg = JSON.parse(readFileSync(path, 'utf8')) as { name?: string; scripts?: Record<string, string> };
  return { name: pkg.name ?? '', scripts: pkg.scripts ?? {} };
}

/** Loose view of the parts of a pod spec the rules read. */
export interface PodSpecView {
  containers: ContainerView[];
  priorityClassName?: string;
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean };
  volumes?: Array<{ name: string }>;
}
export interface ContainerView {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  ports?: Array<{ name?: string; containerPort: number }>;
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: { name: string; key: string } } }>;
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
  livenessProbe?: ProbeView;
  readinessProbe?: ProbeView;
  lifecycle?: { preStop?: { exec?: { command?: string[] }; sleep?: { seconds: number } } };
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; capabilities?: { drop?: string[] } };
  volumeMounts?: Array<{ name: string; mountPath: string }>;
}
export interface ProbeView {
  httpGet?: { path?: string; port: number | string };
}

/** Deployments and Jobs with their pod template. */
export function workloads(ctx: RuleContext): Array<{ file: string; object: KubeObject; pod: PodSpecView; podLabels: Record<string, string>; podAnnotations: Record<string, string> }> {
  return ctx.objects
    .filter((o) => o.object.kind === 'Deployment' || o.object.kind === 'Job')
    .map((o) => {
      const template = (o.object.spec as { template: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: PodSpecView } }).template;
      return { ...o, pod: template.spec, podLabels: template.metadata?.labels ?? {}, podAnnotations: template.metadata?.annotations ?? {} };
    });
}
