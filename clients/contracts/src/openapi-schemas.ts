import { z } from 'zod';
import { contractRegistry } from './registry.ts';
// Imported for their side effect too: each module registers its components in `contractRegistry`.
import './enums.ts';
import './envelope.ts';
import './events.ts';
import './mention.ts';
import './message.ts';
import './notification.ts';
import './message-history.ts';
import './pages.ts';
import './room.ts';
import './search.ts';
import './webhook.ts';

export type JsonObject = Record<string, unknown>;

/** Where a component schema lives in the OpenAPI document. */
export function schemaRef(id: string): { $ref: string } {
  return { $ref: `#/components/schemas/${id}` };
}

// JSON Schema has no integer widths; OpenAPI's `format` carries the spec's int32/int64.
const INTEGER_FORMATS: Record<string, string> = { int32: 'int32', safeint: 'int64' };

/**
 * Every registered zod schema as an OpenAPI 3.1 component schema (JSON Schema 2020-12), with
 * references between components as `$ref`s under `#/components/schemas/`.
 */
export function buildComponentSchemas(): Record<string, JsonObject> {
  const { schemas } = z.toJSONSchema(contractRegistry, {
    metadata: contractRegistry,
    target: 'draft-2020-12',
    uri: (id) => schemaRef(id).$ref,
    override: ({ zodSchema, jsonSchema }) => {
      const format = (zodSchema._zod.def as { format?: unknown }).format;
      if (jsonSchema.type === 'integer' && typeof format === 'string' && INTEGER_FORMATS[format]) {
        jsonSchema.format = INTEGER_FORMATS[format];
      }
    },
  });
  const components: Record<string, JsonObject> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    if (id === '__shared') throw new Error('a contract schema was extracted into shared $defs; give it an id');
    // Components are embedded in one document: they need neither their own dialect nor their own base URI.
    const { $schema: _dialect, $id: _uri, ...rest } = schema as JsonObject;
    components[id] = rest;
  }
  return components;
}
