/** One finding: where it is and what is wrong. A clean tree has none. */
export interface Issue {
  /** Path of the manifest file, relative to the manifest root. */
  file: string;
  /** `Kind/name` of the object, when the finding is about one. */
  object?: string;
  message: string;
}

/** One parsed YAML document of a manifest file. */
export interface ManifestDocument {
  file: string;
  /** Position of the document in its file, from 0. */
  index: number;
  /** The parsed object; anything else (a scalar, a list) is reported by the schema check. */
  value: unknown;
}

/** A Kubernetes object as far as the rules read it: loosely typed, validated by the schema check first. */
export type KubeObject = {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
};

/** `Kind/name` for messages. */
export function describe(object: KubeObject): string {
  return `${object.kind ?? '?'}/${object.metadata?.name ?? '?'}`;
}

export function formatIssue(issue: Issue): string {
  return `${issue.file}${issue.object ? ` ${issue.object}` : ''}: ${issue.message}`;
}
