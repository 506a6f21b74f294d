/**
 * Strict field check, as `kubectl apply --validate=strict` does: every key must be a field of the
 * Kubernetes type at that place. The field lists come from @kubernetes/client-node's generated
 * models (one `attributeTypeMap` per OpenAPI definition), so a misspelt or misplaced key such as
 * `livenessProbe.httpGet.paths` or `spec.template.spec.containers[0].resource` is reported instead
 * of being silently dropped by the API server.
 */
import * as clientModels from '@kubernetes/client-node';

interface Attribute {
  baseName: string;
  type: string;
}
interface ModelClass {
  getAttributeTypeMap(): Attribute[];
}

const models = clientModels as unknown as Record<string, unknown>;

function modelClass(name: string): ModelClass | undefined {
  const candidate = models[name] as Partial<ModelClass> | undefined;
  return typeof candidate?.getAttributeTypeMap === 'function' ? (candidate as ModelClass) : undefined;
}

/** True when `name` is a client-node model class (the kind table refers to these). */
export function isClientModel(name: string): boolean {
  return modelClass(name) !== undefined;
}

const ARRAY = /^Array<(.+)>$/;
const MAP = /^\{ \[key: string\]: (.+); \}$/;

/**
 * Returns the JSON paths (e.g. `/spec/template/spec/containers/0/bogus`) of keys that are not fields
 * of `typeName` at their place. Leaf types (string, number, IntOrString, any, ...) are not entered;
 * wrong leaf types are the schema validator's job.
 */
export function findUnknownFields(value: unknown, typeName: string, path = ''): string[] {
  const array = ARRAY.exec(typeName);
  if (array) {
    if (!Array.isArray(value)) return [];
    return value.flatMap((item, i) => findUnknownFields(item, array[1]!, `${path}/${i}`));
  }
  const map = MAP.exec(typeName);
  if (map) {
    if (!isPlainObject(value)) return [];
    return Object.entries(value).flatMap(([key, item]) => findUnknownFields(item, map[1]!, `${path}/${escape(key)}`));
  }
  const model = modelClass(typeName);
  if (!model || !isPlainObject(value)) return [];
  const fields = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  return Object.entries(value).flatMap(([key, item]) => {
    const fieldType = fields.get(key);
    const at = `${path}/${escape(key)}`;
    return fieldType === undefined ? [at] : findUnknownFields(item, fieldType, at);
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON Pointer escaping, so keys such as `app.kubernetes.io/name` stay readable and unambiguous. */
function escape(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
