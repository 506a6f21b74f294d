import { z } from 'zod';

/** Metadata the OpenAPI generator reads: `id` makes a schema a `#/components/schemas/<id>` component. */
interface ContractSchemaMeta {
  id?: string;
  description?: string;
}

/**
 * The contract's own registry. It is separate from zod's global registry so that schemas other
 * packages describe never leak into (or collide with) the generated OpenAPI components.
 */
export const contractRegistry = z.registry<ContractSchemaMeta>();

/** Registers `schema` as a named OpenAPI component and returns it unchanged. */
export function component<T extends z.ZodType>(schema: T, id: string, description: string): T {
  contractRegistry.add(schema as z.ZodType, { id, description });
  return schema;
}

/** Attaches a description that the OpenAPI document shows; `schema` must not be a shared instance. */
export function described<T extends z.ZodType>(schema: T, description: string): T {
  contractRegistry.add(schema as z.ZodType, { description });
  return schema;
}
