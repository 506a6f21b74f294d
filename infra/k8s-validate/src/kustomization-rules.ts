import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { KustomizationFile } from './manifest-files.ts';
import type { Issue } from './issue.ts';

const KNOWN_FIELDS = new Set(['apiVersion', 'kind', 'namespace', 'resources', 'images', 'labels', 'commonAnnotations']);

/**
 * Each kustomization is well formed and lists existing files, and every manifest file is listed by
 * exactly one kustomization, so `kubectl apply -k` deploys exactly what this check validated.
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
    const resources = Array.isArray(value.resources) ? (value.resources as unknown[]) : [];
    for (const resource of resources) {
      const path = typeof resource === 'string' ? (k.dir ? `${k.dir}/${resource}` : resource) : '';
      if (!path || !existsSync(join(root, path))) issues.push({ file: k.file, message: `resource ${JSON.stringify(resource)} does not exist` });
      else listed.set(path, (listed.get(path) ?? 0) + 1);
    }
  }
  for (const file of manifestFiles) {
    const count = listed.get(file) ?? 0;
    if (count !== 1) issues.push({ file, message: `listed by ${count} kustomizations (must be exactly one)` });
  }
  return issues;
}
