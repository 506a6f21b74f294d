/**
 * A strict schema for custom resources (Gateway API, Envoy Gateway), whose CRDs are not in
 * kubernetes-models or @kubernetes/client-node: each kind lists the fields it may hold, with their
 * types, enums and required keys, and every other key is an unknown field, as
 * `kubectl apply --validate=strict` reports it against the installed CRD. A node can hand a subtree
 * to a core Kubernetes type (`core('V1DeploymentStrategy')`), checked by its client-node model.
 *
 * The lists cover the fields infra/k8s uses and their siblings, from the CRDs of the versions
 * docs/operations.md names; a real field missing here is reported as unknown until it is added
 * after reading the CRD.
 */
import { findUnknownFields } from './unknown-fields.ts';

export type SchemaNode =
  | { type: 'string'; enum?: readonly string[]; pattern?: RegExp }
  | { type: 'integer'; minimum?: number; maximum?: number }
  | { type: 'boolean' }
  | { type: 'object'; fields: Readonly<Record<string, SchemaNode>>; required?: readonly string[] }
  | { type: 'map'; values: SchemaNode }
  | { type: 'array'; items: SchemaNode; minItems?: number }
  /** A core Kubernetes type, checked for unknown fields by its @kubernetes/client-node model. */
  | { type: 'core'; model: string }
  | { type: 'integer-or-string' }
  /** A field whose content this check does not model (a rule may still refuse the field itself). */
  | { type: 'any' };

/** Gateway API `Duration`: up to four number-unit pairs, `1h`, `90s`, `1h30m`, `500ms`. */
export const DURATION = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/;
/** A Kubernetes resource quantity (`1Mi`, `512Ki`, `1048576`). */
export const QUANTITY = /^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T|m)?$/;

export const str = (options: { enum?: readonly string[]; pattern?: RegExp } = {}): SchemaNode => ({ type: 'string', ...options });
export const int = (minimum?: number, maximum?: number): SchemaNode => ({ type: 'integer', minimum, maximum });
export const bool: SchemaNode = { type: 'boolean' };
export const duration: SchemaNode = { type: 'string', pattern: DURATION };
export const quantity: SchemaNode = { type: 'string', pattern: QUANTITY };
export const intOrString: SchemaNode = { type: 'integer-or-string' };
export const obj = (fields: Record<string, SchemaNode>, required: readonly string[] = []): SchemaNode => ({ type: 'object', fields, required });
export const arr = (items: SchemaNode, minItems?: number): SchemaNode => ({ type: 'array', items, minItems });
export const map = (values: SchemaNode): SchemaNode => ({ type: 'map', values });
export const core = (model: string): SchemaNode => ({ type: 'core', model });
export const anything: SchemaNode = { type: 'any' };

/** One finding of the schema check: the JSON path and what is wrong there. */
export interface SchemaFinding {
  path: string;
  message: string;
}

/** Checks `value` against `node`; returns nothing when it conforms. */
export function checkNode(value: unknown, node: SchemaNode, path = ''): SchemaFinding[] {
  const at = path || '/';
  switch (node.type) {
    case 'string':
      if (typeof value !== 'string') return [{ path: at, message: 'must be string' }];
      if (node.enum && !node.enum.includes(value)) return [{ path: at, message: `must be one of ${JSON.stringify(node.enum)}` }];
      if (node.pattern && !node.pattern.test(value)) return [{ path: at, message: `must match ${String(node.pattern)}` }];
      return [];
    case 'integer':
      if (!Number.isInteger(value)) return [{ path: at, message: 'must be integer' }];
      if (node.minimum !== undefined && (value as number) < node.minimum) return [{ path: at, message: `must be >= ${node.minimum}` }];
      if (node.maximum !== undefined && (value as number) > node.maximum) return [{ path: at, message: `must be <= ${node.maximum}` }];
      return [];
    case 'boolean':
      return typeof value === 'boolean' ? [] : [{ path: at, message: 'must be boolean' }];
    case 'any':
      return [];
    case 'integer-or-string':
      return Number.isInteger(value) || typeof value === 'string' ? [] : [{ path: at, message: 'must be integer or string' }];
    case 'core':
      return isPlainObject(value) ? findUnknownFields(value, node.model, path).map((p) => ({ path: p, message: 'unknown field' })) : [{ path: at, message: 'must be object' }];
    case 'array':
      if (!Array.isArray(value)) return [{ path: at, message: 'must be array' }];
      if (node.minItems !== undefined && value.length < node.minItems) return [{ path: at, message: `must have at least ${node.minItems} items` }];
      return value.flatMap((item, i) => checkNode(item, node.items, `${path}/${i}`));
    case 'map':
      if (!isPlainObject(value)) return [{ path: at, message: 'must be object' }];
      return Object.entries(value).flatMap(([key, item]) => checkNode(item, node.values, `${path}/${escape(key)}`));
    case 'object': {
      if (!isPlainObject(value)) return [{ path: at, message: 'must be object' }];
      const missing = (node.required ?? []).filter((key) => value[key] === undefined).map((key) => ({ path: at, message: `must have required property ${key}` }));
      const fields = Object.entries(value).flatMap(([key, item]) => {
        const child = node.fields[key];
        return child === undefined ? [{ path: `${path}/${escape(key)}`, message: 'unknown field' }] : checkNode(item, child, `${path}/${escape(key)}`);
      });
      return [...missing, ...fields];
    }
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON Pointer escaping, as the core kinds' unknown-field paths have it. */
function escape(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Seconds of a Gateway API duration (`1h30m` → 5400); undefined when it is not one. */
export function durationSeconds(value: unknown): number | undefined {
  if (typeof value !== 'string' || !DURATION.test(value)) return undefined;
  const unit = { h: 3600, m: 60, s: 1, ms: 0.001 } as const;
  let seconds = 0;
  for (const [, amount, suffix] of value.matchAll(/([0-9]+)(ms|h|m|s)/g)) seconds += Number(amount) * unit[suffix as keyof typeof unit];
  return seconds;
}
