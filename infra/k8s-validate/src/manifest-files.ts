import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { Issue, ManifestDocument } from './issue.ts';

/** A kustomization file: its folder (relative to the root, `''` for the root) and parsed content. */
export interface KustomizationFile {
  file: string;
  dir: string;
  value: unknown;
}

export interface ManifestTree {
  documents: ManifestDocument[];
  kustomizations: KustomizationFile[];
  /** Every `.yaml`/`.yml` file other than kustomizations and templates, relative to the root with `/` separators. */
  manifestFiles: string[];
  /**
   * Templates (`*.example.yaml`): checked like manifests, but applied by no kustomization (the Secret
   * template, whose real values come from the secret manager).
   */
  templateFiles: string[];
  /** YAML syntax errors (duplicate keys, bad indentation, tabs, ...). */
  issues: Issue[];
}

const KUSTOMIZATION = /^kustomization\.ya?ml$/;
/** A template: schema-checked, never listed by a kustomization. */
export const TEMPLATE = /\.example\.ya?ml$/;

/**
 * Reads every YAML file under `root`. Parsed as YAML 1.1, as the Kubernetes API machinery does, so
 * `yes`/`on` become booleans here exactly as they would in the cluster.
 */
export async function loadManifestTree(root: string): Promise<ManifestTree> {
  const tree: ManifestTree = { documents: [], kustomizations: [], manifestFiles: [], templateFiles: [], issues: [] };
  for (const path of await yamlFiles(root)) {
    const file = relative(root, path).split(sep).join('/');
    const text = await readFile(path, 'utf8');
    const parsed = parseManifestText(file, text);
    tree.issues.push(...parsed.issues);
    const name = file.split('/').pop()!;
    if (KUSTOMIZATION.test(name)) {
      const dir = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '';
      tree.kustomizations.push({ file, dir, value: parsed.documents[0]?.value });
      const generated = await generatedConfigMaps(root, file, dir, parsed.documents[0]?.value);
      tree.documents.push(...generated.documents);
      tree.issues.push(...generated.issues);
    } else {
      (TEMPLATE.test(name) ? tree.templateFiles : tree.manifestFiles).push(file);
      tree.documents.push(...parsed.documents);
    }
  }
  return tree;
}

/** Parses one multi-document YAML text; empty documents (a trailing `---`) are skipped. */
export function parseManifestText(file: string, text: string): { documents: ManifestDocument[]; issues: Issue[] } {
  const documents: ManifestDocument[] = [];
  const issues: Issue[] = [];
  parseAllDocuments(text, { version: '1.1', uniqueKeys: true }).forEach((doc, index) => {
    for (const error of [...doc.errors, ...doc.warnings]) issues.push({ file, message: `YAML: ${error.message.split('\n')[0]}` });
    const value: unknown = doc.toJS();
    if (value !== null && value !== undefined) documents.push({ file, index, value });
  });
  return { documents, issues };
}

interface ConfigMapGenerator {
  name?: unknown;
  files?: unknown;
  options?: { disableNameSuffixHash?: unknown; labels?: unknown };
}

/**
 * The ConfigMaps a kustomization's `configMapGenerator` makes (each key a file's name, its value the
 * file's text, as kustomize makes them), as documents of the kustomization's file, so the schema
 * check and the rules see them as they will be applied. Each must opt out of the name hash: a
 * ConfigMap read by a sidecar that watches labels (Grafana's dashboards) would otherwise pile up,
 * one per edit.
 */
async function generatedConfigMaps(root: string, file: string, dir: string, kustomization: unknown): Promise<{ documents: ManifestDocument[]; issues: Issue[] }> {
  const { configMapGenerator, namespace } = (kustomization ?? {}) as { configMapGenerator?: unknown; namespace?: unknown };
  const documents: ManifestDocument[] = [];
  const issues: Issue[] = [];
  for (const [index, generator] of (Array.isArray(configMapGenerator) ? (configMapGenerator as ConfigMapGenerator[]) : []).entries()) {
    const data: Record<string, string> = {};
    for (const source of Array.isArray(generator.files) ? generator.files : []) {
      const path = typeof source === 'string' ? join(root, dir, source) : '';
      const text = path ? await readFile(path, 'utf8').catch(() => undefined) : undefined;
      if (text === undefined) issues.push({ file, message: `configMapGenerator ${JSON.stringify(generator.name)}: file ${JSON.stringify(source)} does not exist` });
      else data[(source as string).split('/').pop()!] = text;
    }
    if (generator.options?.disableNameSuffixHash !== true) {
      issues.push({ file, message: `configMapGenerator ${JSON.stringify(generator.name)}: set options.disableNameSuffixHash: true, so an edit replaces the ConfigMap instead of adding one` });
    }
    const metadata = { name: generator.name, ...(typeof namespace === 'string' ? { namespace } : {}), ...(generator.options?.labels ? { labels: generator.options.labels } : {}) };
    documents.push({ file, index, value: { apiVersion: 'v1', kind: 'ConfigMap', metadata, data } });
  }
  return { documents, issues };
}

async function yamlFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await yamlFiles(path)));
    else if (/\.ya?ml$/.test(entry.name)) files.push(path);
  }
  return files;
}
