import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { TEMPLATE, type KustomizationFile } from './manifest-files.ts';
import type { Issue, KubeObject, ManifestDocument } from './issue.ts';

const KNOWN_FIELDS = new Set(['apiVersion', 'kind', 'namespace', 'resources', 'images', 'labels', 'commonAnnotations']);

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
    if (value.apiVersion !== 'kustomize.config.k8s.io/v1beta1' || value.kind !== 'Kustomization') {
      issues.push({ file: k.file, message: 'must be apiVersion kustomize.config.k8s.io/v1beta1, kind Kustomization' });
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

interface ImageEntry {
  name?: string;
  newName?: string;
  newTag?: string;
  digest?: string;
}

/**
 * The release is named in one place, by digest: every image a kustomization's workloads name has an
 * `images:` entry of that kustomization with a `sha256:` digest and no tag (a tag can be moved to
 * another image after it was tested; a digest cannot). The workloads themselves name the bare
 * repository (the document-level rule `imagesNamedByKustomization`).
 */
export function checkImagesByDigest(kustomizations: KustomizationFile[], documents: ManifestDocument[]): Issue[] {
  const issues: Issue[] = [];
  for (const k of kustomizations) {
    const files = new Set(resourcesOf(k).filter((r): r is string => typeof r === 'string').map((r) => (k.dir ? `${k.dir}/${r}` : r)));
    const entries = ((k.value as { images?: unknown } | undefined)?.images ?? []) as ImageEntry[];
    const names = new Set<string>();
    for (const doc of documents.filter((d) => files.has(d.file))) {
      const object = doc.value as KubeObject;
      if (object.kind !== 'Deployment' && object.kind !== 'Job') continue;
      const containers = ((object.spec as { template?: { spec?: { containers?: Array<{ image?: string }> } } }).template?.spec?.containers ?? []);
      for (const c of containers) names.add(repositoryOf(c.image ?? ''));
    }
    for (const name of names) {
      const entry = entries.find((e) => e.name === name);
      if (!entry) issues.push({ file: k.file, message: `images: no entry for ${name}; pin it by digest (kustomize edit set image ${name}@sha256:<digest>)` });
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
