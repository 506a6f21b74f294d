import { expect } from 'chai';
import { z } from 'zod';
import {
  AppendMessageRequestSchema,
  MessageResponseSchema,
  errorEnvelope,
  ErrorEnvelopeSchema,
  ERROR_CODES,
} from './index.ts';
import { ENUM_CASES, SCHEMA_CASES, variants } from '../test/schema-cases.fixture.ts';

describe('contract schemas', () => {
  for (const c of SCHEMA_CASES) {
    describe(c.id, () => {
      it('has exactly the properties of spec section 2', () => {
        const shape = (c.schema as z.ZodObject).shape;
        const expected = [...c.required, ...c.nullableOptional, ...c.optionalOnly].sort();
        expect(Object.keys(shape).sort()).to.deep.equal(expected);
        expect(Object.keys(c.full).sort()).to.deep.equal(expected);
      });

      for (const v of variants(c)) {
        it(`${v.valid ? 'accepts' : 'rejects'} ${v.label}`, () => {
          const result = c.schema.safeParse(v.value);
          expect(result.success, JSON.stringify(result.error?.issues)).to.equal(v.valid);
        });
      }

      const nested = Object.entries(c.full).find(([, value]) => typeof value === 'object' && value !== null);
      if (nested !== undefined) {
        it(`rejects an unknown property inside ${nested[0]}`, () => {
          const [key, value] = nested;
          const mutated = Array.isArray(value)
            ? { ...c.full, [key]: [{ ...(value[0] as object), unexpected: 1 }] }
            : { ...c.full, [key]: { ...(value as object), unexpected: 1 } };
          expect(c.schema.safeParse(mutated).success).to.equal(false);
        });
      }
    });
  }

  for (const e of ENUM_CASES) {
    it(`${e.id} allows exactly ${e.values.join(', ')}`, () => {
      for (const value of e.values) expect(e.schema.safeParse(value).success).to.equal(true);
      for (const value of ['', 'other', e.values[0]!.toUpperCase(), null, 1]) {
        expect(e.schema.safeParse(value).success, String(value)).to.equal(false);
      }
      expect((e.schema as z.ZodEnum).options).to.deep.equal(e.values);
    });
  }

  describe('message bodies', () => {
    const base = SCHEMA_CASES.find((c) => c.id === 'MessageResponse')!.full;

    it('bounds a response body by UTF-8 bytes, not characters', () => {
      expect(MessageResponseSchema.safeParse({ ...base, bodyMarkdown: 'é'.repeat(8192) }).success).to.equal(true);
      expect(MessageResponseSchema.safeParse({ ...base, bodyMarkdown: 'é'.repeat(8193) }).success).to.equal(false);
      expect(MessageResponseSchema.safeParse({ ...base, bodyMarkdown: '😀'.repeat(4096) }).success).to.equal(true);
      expect(MessageResponseSchema.safeParse({ ...base, bodyMarkdown: '😀'.repeat(4097) }).success).to.equal(false);
    });

    it('leaves request body length to the domain (it counts bytes and answers MESSAGE_INVALID)', () => {
      expect(AppendMessageRequestSchema.safeParse({ bodyMarkdown: '' }).success).to.equal(true);
      expect(AppendMessageRequestSchema.safeParse({ bodyMarkdown: 'x'.repeat(20_000) }).success).to.equal(true);
    });

    it('accepts timestamps with any fractional precision and with offsets', () => {
      for (const createdAt of ['2025-03-01T12:00:00Z', '2025-03-01T12:00:00.123456Z', '2025-03-01T12:00:00-05:30']) {
        expect(MessageResponseSchema.safeParse({ ...base, createdAt }).success, createdAt).to.equal(true);
      }
    });
  });

  it('errorEnvelope builds a valid envelope for every code', () => {
    for (const code of ERROR_CODES) {
      const envelope = errorEnvelope(code, 'message', 'req-1');
      expect(ErrorEnvelopeSchema.parse(envelope)).to.deep.equal({ error: { code, message: 'message', requestId: 'req-1' } });
    }
  });
});
