import { checkNode } from './custom-resource-schema.ts';
import { findKind } from './kinds.ts';
import { findUnknownFields } from './unknown-fields.ts';
import type { Issue, ManifestDocument } from './issue.ts';

interface SchemaError {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

function describeError(e: SchemaError): string {
  const p = e.params ?? {};
  switch (e.keyword) {
    case 'required':
      return `must have required property ${String(p.missingProperty)}`;
    case 'type':
      return `must be ${String(p.type)}`;
    case 'enum':
      return `must be one of ${JSON.stringify(p.allowedValues)}`;
    case 'format':
      return `must match format ${String(p.format)}`;
    default:
      return `fails ${e.keyword ?? 'a schema rule'} ${JSON.stringify(p)}`;
  }
}

/**
 * Validates one document against the Kubernetes schema of its kind: a known apiVersion/kind, the
 * OpenAPI rules (required fields, types, formats, enums), no unknown fields, and a metadata.name.
 */
export function checkSchema(doc: ManifestDocument): Issue[] {
  const { file, value } = doc;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [{ file, message: `document ${doc.index} is not a Kubernetes object` }];
  }
  const object = value as Record<string, unknown>;
  const metadata = object.metadata as { name?: unknown } | undefined;
  const label = `${String(object.kind)}/${typeof metadata?.name === 'string' ? metadata.name : '?'}`;
  const known = findKind(object.apiVersion, object.kind);
  if (!known) {
    return [{ file, object: label, message: `unknown kind: apiVersion ${JSON.stringify(object.apiVersion)}, kind ${JSON.stringify(object.kind)}` }];
  }
  const issues: Issue[] = [];
  if (typeof metadata?.name !== 'string' || metadata.name === '') {
    issues.push({ file, object: label, message: 'metadata.name is required' });
  }
  if ('schema' in known) {
    for (const f of checkNode(object, known.schema)) {
      issues.push({ file, object: label, message: f.message === 'unknown field' ? `schema: unknown field ${f.path}` : `schema: ${f.path} ${f.message}` });
    }
    return issues;
  }
  try {
    new known.model(object as never).validate();
  } catch (err) {
    const errors = (err as { errors?: SchemaError[] }).errors;
    if (!errors) throw err;
    for (const e of errors) {
      // kubernetes-models' compiled validators leave `message` unset; ajv's keyword + params say it.
      const detail = e.message ?? describeError(e);
      issues.push({ file, object: label, message: `schema: ${e.instancePath || '/'} ${detail ?? 'is invalid'}` });
    }
  }
  for (const path of findUnknownFields(object, known.clientModel)) {
    issues.push({ file, object: label, message: `schema: unknown field ${path}` });
  }
  return issues;
}
