import { existsSync } from 'node:fs';
import { join, posix } from 'node:path';
import { TEMPLATE, type KustomizationFile } from './manifest-files.ts';
import type { Issue, KubeObject, ManifestDocument } from './issue.ts';

const KNOWN_FIELDS = new Set(['apiVersion', 'kind', 'namespace', 'resources', 'components', 'images', 'labels', 'commonAnnotations', 'configMapGenerator']);

/** What a kustomization file may be: a kustomization, or a component that kustomizations include. */
const KINDS = [
  { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization' },
  { apiVersion: 'kustomize.config.k8s.io/v1alpha1', kind: 'Component' },
];

/** The only form an image reference of a kustomization may take: an immutable content digest. */
const DIGEST = /^sha256:[0-9a-f]{64}$/;

/**
 * Each kustomization is well formed and lists existing files, and every manifest file is listed by
 * exactly one kustomization, so `kubectl apply -k` deploys exactly what this check validated.
 * Templates (`*.example.yaml`) are listed by none: applying the Secret template would overwrite the
 * real Secret with its placeholders.
 */
export function checkKustomizations(root: string, kustomizations: KustomizationFile[], manifestFiles: string[]): Issue[] {
  const issues: Issue[] = [];
  const listed = new Map<string, number>();
  for (const k of kustomizations) {
    const value = (k.value ?? {}) as Record<string, unknown>;
    if (!KINDS.some((known) => value.apiVersion === known.apiVersion && value.kind === known.kind)) {
      issues.push({ file: k.file, message: 'must be apiVersion kustomize.config.k8s.io/v1beta1, kind Kustomization (or v1alpha1, kind Component)' });
    }
    for (const component of componentsOf(k)) {
      const dir = typeof component === 'string' ? posix.normalize(posix.join(k.dir, component)) : '';
      if (!kustomizations.some((c) => c.dir === dir && (c.value as { kind?: unknown } | undefined)?.kind === 'Component')) {
        issues.push({ file: k.file, message: `component ${JSON.stringify(component)} is no folder with a kind Component kustomization` });
      }
    }
    for (const key of Object.keys(value).filter((f) => !KNOWN_FIELDS.has(f))) issues.push({ file: k.file, message: `unknown or unsupported field ${key}` });
    for (const resource of resourcesOf(k)) {
      const path = typeof resource === 'string' ? (k.dir ? `${k.dir}/${resource}` : resource) : '';
      if (!path || !existsSync(join(root, path))) issues.push({ file: k.file, message: `resource ${JSON.stringify(resource)} does not exist` });
      else if (TEMPLATE.test(path)) issues.push({ file: k.file, message: `resource ${JSON.stringify(resource)} is a template: applying it would overwrite the real objects with its placeholders` });
      else listed.set(path, (listed.get(path) ?? 0) + 1);
    }
  }
  for (const file of manifestFiles) {
    const count = listed.get(file) ?? 0;
    if (count !== 1) issues.push({ file, message: `listed by ${count} kustomizations (must be exactly one)` });
  }
  return issues;
}

function resourcesOf(k: KustomizationFile): unknown[] {
  const resources = (k.value as { resources?: unknown } | undefined)?.resources;
  return Array.isArray(resources) ? resources : [];
}

function componentsOf(k: KustomizationFile): unknown[] {
  const components = (k.value as { components?: unknown } | undefined)?.components;
  return Array.isArray(components) ? components : [];
}

function imagesOf(k: KustomizationFile): ImageEntry[] {
  const images = (k.value as { images?: unknown } | undefined)?.images;
  return Array.isArray(images) ? (images as ImageEntry[]) : [];
}

interface ImageEntry {
  name?: string;
  newName?: string;
  newTag?: string;
  digest?: string;
}

/**
 * The release is named in one place, by digest: every image the workloads of a kustomization name
 * has an `images:` entry, of that kustomization or of a component it includes, with a `sha256:`
 * digest and no tag (a tag can be moved to another image after it was tested; a digest cannot),
 * and no image has entries in two files (the application and the migration Job would drift apart).
 * The workloads themselves name the bare repository (the rule `imagesNamedByKustomization`).
 */
export function checkImagesByDigest(kustomizations: KustomizationFile[], documents: ManifestDocument[]): Issue[] {
  const issues: Issue[] = [];
  const named = new Map<string, string[]>();
  for (const k of kustomizations) for (const e of imagesOf(k)) if (e.name) named.set(e.name, [...(named.get(e.name) ?? []), k.file]);
  for (const [name, files] of named) {
    if (files.length > 1) issues.push({ file: files[1]!, message: `images: ${name} is named in ${files.length} places (${files.join(', ')}): name it once, in a component every kustomization includes` });
  }
  for (const k of kustomizations) {
    const files = new Set(resourcesOf(k).filter((r): r is string => typeof r === 'string').map((r) => (k.dir ? `${k.dir}/${r}` : r)));
    const componentDirs = componentsOf(k).filter((c): c is string => typeof c === 'string').map((c) => posix.normalize(posix.join(k.dir, c)));
    const entries = [k, ...kustomizations.filter((c) => componentDirs.includes(c.dir))].flatMap(imagesOf);
    const used = new Set<string>();
    for (const doc of documents.filter((d) => files.has(d.file))) {
      const object = doc.value as KubeObject;
      if (object.kind !== 'Deployment' && object.kind !== 'Job') continue;
      const containers = (object.spec as { template?: { spec?: { containers?: Array<{ image?: string }> } } }).template?.spec?.containers ?? [];
      for (const c of containers) used.add(repositoryOf(c.image ?? ''));
    }
    for (const name of used) {
      const entry = entries.find((e) => e.name === name);
      if (!entry) issues.push({ file: k.file, message: `images: no entry for ${name} here or in a component; pin it by digest (kustomize edit set image ${name}@sha256:<digest>)` });
      else if (entry.newTag !== undefined || !DIGEST.test(entry.digest ?? '')) {
        issues.push({ file: k.file, message: `images: ${name} must be pinned by digest (digest: sha256:<64 hex>, no newTag), not ${entry.newTag !== undefined ? `tag ${entry.newTag}` : JSON.stringify(entry.digest ?? '')}` });
      }
    }
  }
  return issues;
}

/** An image reference without its tag or digest. */
export function repositoryOf(image: string): string {
  const withoutDigest = image.split('@')[0]!;
  const lastSlash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.indexOf(':', lastSlash + 1);
  return colon === -1 ? withoutDigest : withoutDigest.slice(0, colon);
}
