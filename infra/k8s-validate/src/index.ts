export { validateManifestDirectory, validateDocuments, PROJECT_RULES, type ValidationReport } from './validate-manifests.ts';
export { loadManifestTree, parseManifestText, type ManifestTree, type KustomizationFile } from './manifest-files.ts';
export { checkSchema } from './schema-check.ts';
export { findUnknownFields } from './unknown-fields.ts';
export { KNOWN_KINDS, findKind, type KnownKind } from './kinds.ts';
export { formatIssue, type Issue, type ManifestDocument } from './issue.ts';
