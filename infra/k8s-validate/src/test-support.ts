import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadManifestTree } from './manifest-files.ts';
import type { KubeObject, ManifestDocument } from './issue.ts';

export const REPO_ROOT = resolve(fileURLToPath(import.meta.url), '../../../..');
export const MANIFEST_DIR = `${REPO_ROOT}/infra/k8s`;

/** The committed manifests, parsed afresh (each test mutates its own copy). */
export async function committedDocuments(): Promise<ManifestDocument[]> {
  return (await loadManifestTree(MANIFEST_DIR)).documents;
}

/** Copies `documents` and applies `change` to the object `kind/name`; throws when it is absent. */
export function withChange(documents: ManifestDocument[], kind: string, name: string, change: (o: Record<string, any>) => void): ManifestDocument[] {
  const copy = structuredClone(documents);
  const target = copy.find((d) => (d.value as KubeObject).kind === kind && (d.value as KubeObject).metadata?.name === name);
  if (!target) throw new Error(`no ${kind}/${name} in the manifests`);
  change(target.value as Record<string, any>);
  return copy;
}
