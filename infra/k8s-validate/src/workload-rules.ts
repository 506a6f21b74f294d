/**
 * Rules for every Deployment and Job: which package script the container runs, resources, images,
 * and the security context the `restricted` Pod Security Standard asks for.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { configData, issueFor, ofKind, packageManifest, secretKeys, workloads, type Rule } from './rule-context.ts';
import { repositoryOf } from './kustomization-rules.ts';
import { imagePackageDir, WORKLOADS } from './service-catalog.ts';
import type { Issue } from './issue.ts';

/**
 * Each workload names a known component, and its command is that package's script without pnpm:
 * `node dist/<entry>.js` (the compiled `src/<entry>.ts`) in the package's folder inside the image.
 */
export const commandMatchesPackageScript: Rule = (ctx) =>
  workloads(ctx).flatMap(({ file, object, pod }) => {
    const component = object.metadata?.labels?.['app.kubernetes.io/component'] ?? '';
    const spec = WORKLOADS[component];
    if (!spec) return [issueFor(file, object, `label app.kubernetes.io/component "${component}" names no known workload (${Object.keys(WORKLOADS).join(', ')})`)];
    const pkg = packageManifest(ctx.repoRoot, spec.packageDir);
    if (!pkg) return [issueFor(file, object, `package ${spec.packageDir} does not exist`)];
    const script = pkg.scripts[spec.script];
    if (script === undefined) return [issueFor(file, object, `${spec.packageDir}/package.json has no "${spec.script}" script`)];
    const entry = /^node dist\/(\S+)\.js$/.exec(script.trim());
    if (!entry) return [issueFor(file, object, `script "${spec.script}" of ${spec.packageDir} is "${script}", not "node dist/<file>.js"`)];
    const issues: Issue[] = [];
    if (!existsSync(join(ctx.repoRoot, spec.packageDir, 'src', `${entry[1]}.ts`))) {
      issues.push(issueFor(file, object, `${spec.packageDir}/src/${entry[1]}.ts (the source of the "${spec.script}" script's entry) does not exist`));
    }
    const expected = ['node', `dist/${entry[1]}.js`];
    const workingDir = imagePackageDir(pkg.name);
    for (const c of pod.containers) {
      const actual = [...(c.command ?? []), ...(c.args ?? [])];
      if (JSON.stringify(actual) !== JSON.stringify(expected) || c.workingDir !== workingDir) {
        issues.push(issueFor(file, object, `container ${c.name} runs ${JSON.stringify(actual)} in ${c.workingDir ?? '(image default)'}; "${spec.script}" of ${spec.packageDir} is ${JSON.stringify(expected)} in ${workingDir}`));
      }
    }
    return issues;
  });

/** CPU and memory requests and limits on every container. */
export const resourcesSet: Rule = (ctx) =>
  workloads(ctx).flatMap(({ file, object, pod }) =>
    pod.containers.flatMap((c) =>
      (['requests', 'limits'] as const).flatMap((kind) =>
        ['cpu', 'memory']
          .filter((resource) => c.resources?.[kind]?.[resource] === undefined)
          .map((resource) => issueFor(file, object, `container ${c.name} has no ${kind}.${resource}`)),
      ),
    ),
  );

/**
 * Workloads name the bare image repository: the release is pinned in one place, by digest, by the
 * kustomization's `images:` (kustomization-rules.ts), never by a tag here that a second place
 * must repeat.
 */
export const imagesNamedByKustomization: Rule = (ctx) =>
  workloads(ctx).flatMap(({ file, object, pod }) =>
    pod.containers
      .filter((c) => !c.image || repositoryOf(c.image) !== c.image)
      .map((c) => issueFor(file, object, `container ${c.name} image "${c.image ?? ''}" must be the bare repository ${repositoryOf(c.image ?? '')}: the kustomization's images: pins it by digest`)),
  );

/** Non-root, no privilege escalation, no capabilities, read-only root with a writable /tmp. */
export const securityHardened: Rule = (ctx) =>
  workloads(ctx).flatMap(({ file, object, pod }) => {
    const issues: Issue[] = [];
    if (pod.securityContext?.runAsNonRoot !== true) issues.push(issueFor(file, object, 'pod securityContext.runAsNonRoot must be true'));
    for (const c of pod.containers) {
      const sc = c.securityContext;
      if (sc?.allowPrivilegeEscalation !== false) issues.push(issueFor(file, object, `container ${c.name}: allowPrivilegeEscalation must be false`));
      if (sc?.readOnlyRootFilesystem !== true) issues.push(issueFor(file, object, `container ${c.name}: readOnlyRootFilesystem must be true`));
      if (!sc?.capabilities?.drop?.includes('ALL')) issues.push(issueFor(file, object, `container ${c.name}: capabilities.drop must include ALL`));
      if (!c.volumeMounts?.some((m) => m.mountPath === '/tmp')) issues.push(issueFor(file, object, `container ${c.name}: needs a writable /tmp (HOME, os.tmpdir()) with a read-only root`));
    }
    return issues;
  });

/** envFrom and secretKeyRef/configMapKeyRef point at objects (and keys) that exist. */
export const configReferencesResolve: Rule = (ctx) => {
  const configMaps = new Set(ofKind(ctx, 'ConfigMap').map((c) => c.object.metadata?.name));
  const secrets = secretKeys(ctx);
  const config = configData(ctx);
  return workloads(ctx).flatMap(({ file, object, pod }) =>
    pod.containers.flatMap((c) => {
      const missing: string[] = [];
      for (const from of c.envFrom ?? []) {
        if (from.configMapRef && !configMaps.has(from.configMapRef.name)) missing.push(`ConfigMap ${from.configMapRef.name}`);
        if (from.secretRef && !secrets.has(from.secretRef.name)) missing.push(`Secret ${from.secretRef.name}`);
      }
      for (const e of c.env ?? []) {
        const sref = e.valueFrom?.secretKeyRef;
        if (sref && !secrets.get(sref.name)?.includes(sref.key)) missing.push(`Secret ${sref.name} key ${sref.key}`);
        const cref = e.valueFrom?.configMapKeyRef;
        if (cref && !(configMaps.has(cref.name) && cref.key in config)) missing.push(`ConfigMap ${cref.name} key ${cref.key}`);
      }
      return missing.map((m) => issueFor(file, object, `container ${c.name} refers to ${m}, which is not defined`));
    }),
  );
};
