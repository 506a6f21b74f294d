import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { testConfig } from './test-config.ts';

type Json = Record<string, unknown>;

/** The committed contract: clients/contracts/openapi.json. */
export const openApiDocument = JSON.parse(
  readFileSync(join(testConfig.repoRoot, 'clients/contracts/openapi.json'), 'utf8'),
) as Json & { paths: Record<string, Record<string, Json>>; components: Json };

const DOCUMENT_ID = 'urn:chat:openapi';
const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

export interface ObservedResponse {
  method: string;
  /** Request path as sent, query string included. */
  path: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface MatchedOperation {
  operationId: string;
  template: string;
  operation: Json;
}

function resolveRef<T>(value: T): T {
  let v = value as Json;
  for (let depth = 0; typeof v?.$ref === 'string' && depth < 10; depth++) {
    const pointer = (v.$ref as string).replace(/^#\//, '').split('/');
    let target: unknown = openApiDocument;
    for (const part of pointer) target = (target as Json)[part];
    // An operation's $ref sibling (description) overrides nothing that matters for validation.
    v = target as Json;
  }
  return v as T;
}

/** Splits a path into segments the way express 5 routes it: case-insensitive, trailing slash optional. */
function segments(path: string): string[] {
  const trimmed = path.replace(/\/+$/, '');
  return trimmed.split('/').slice(1);
}

/**
 * Finds the operation the document lists for `method` and `path` (query ignored). Path parameters
 * match any one non-empty segment, literal segments match case-insensitively (as express does).
 */
export function findOperation(method: string, path: string): MatchedOperation | undefined {
  const pathname = path.split('?')[0]!;
  const actual = segments(pathname);
  for (const [template, item] of Object.entries(openApiDocument.paths)) {
    const expected = segments(template);
    if (expected.length !== actual.length) continue;
    const same = expected.every((e, i) => (e.startsWith('{') ? actual[i]!.length > 0 : e.toLowerCase() === actual[i]!.toLowerCase()));
    if (!same) continue;
    const operation = item[method.toLowerCase()];
    if (operation === undefined || !HTTP_METHODS.has(method.toLowerCase())) return undefined;
    return { operationId: operation.operationId as string, template, operation };
  }
  return undefined;
}

/** True when the path (any method) is one of the document's paths. */
export function isDocumentedPath(path: string): boolean {
  const actual = segments(path.split('?')[0]!);
  return Object.keys(openApiDocument.paths).some((template) => {
    const expected = segments(template);
    return expected.length === actual.length && expected.every((e, i) => (e.startsWith('{') ? actual[i]!.length > 0 : e.toLowerCase() === actual[i]!.toLowerCase()));
  });
}

/**
 * Checks responses against the committed OpenAPI 3.1 document with ajv (JSON Schema 2020-12):
 * status listed for the operation, required headers present and well-formed, `X-Request-Id` equal
 * to the envelope's `requestId` on errors, JSON body valid against the response schema. Responses
 * outside any operation (unknown routes, wrong methods) must still be the ErrorEnvelope.
 */
export class OpenApiValidator {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor() {
    this.ajv = new Ajv2020({ strict: true, strictTypes: false, allErrors: true });
    addFormats.default(this.ajv);
    this.ajv.addKeyword({ keyword: 'components' });
    this.ajv.addSchema({ $id: DOCUMENT_ID, components: { schemas: (openApiDocument.components as Json).schemas } });
  }

  /** A validator for a schema object of the document (usually `{ $ref: '#/components/...' }`). */
  private validatorFor(schema: Json): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = this.compiled.get(key);
    if (!validate) {
      // Relative refs resolve against the hosted document.
      validate = this.ajv.compile({ $id: `${DOCUMENT_ID}:${this.compiled.size}`, ...rebase(schema) });
      this.compiled.set(key, validate);
    }
    return validate;
  }

  /** Validates a value against a named component schema. */
  schemaProblems(component: string, value: unknown): string[] {
    const validate = this.validatorFor({ $ref: `#/components/schemas/${component}` });
    return validate(value) ? [] : [`body is not a valid ${component}: ${this.ajv.errorsText(validate.errors)}`];
  }

  /** Every way `response` breaks the contract; empty when it complies. */
  problems(response: ObservedResponse): string[] {
    const problems: string[] = [];
    const requestIdHeader = header(response.headers, 'x-request-id');
    if (requestIdHeader === undefined) problems.push('X-Request-Id header missing');
    else if (!/^[A-Za-z0-9._:-]{1,128}$/.test(requestIdHeader)) problems.push(`X-Request-Id header malformed: ${requestIdHeader}`);

    const pathname = response.path.split('?')[0]!;
    if (pathname.replace(/\/+$/, '').toLowerCase() === '/v1/openapi.json' && response.method === 'GET' && response.status === 200) {
      return problems;
    }
    const matched = findOperation(response.method, response.path);
    // A 204 the operation lists carries no body (HTTP gives it none), so there is nothing to parse.
    const noContent = matched && response.status === 204 ? (matched.operation.responses as Record<string, Json>)['204'] : undefined;
    if (noContent) {
      if (resolveRef(noContent).content !== undefined) problems.push(`${matched!.operationId} 204 declares content`);
      if (response.body !== '') problems.push(`${matched!.operationId} 204 has a body: ${response.body.slice(0, 200)}`);
      return problems;
    }
    let body: unknown;
    const contentType = header(response.headers, 'content-type') ?? '';
    if (!/^application\/json\b/.test(contentType)) problems.push(`content-type is ${JSON.stringify(contentType)}, not application/json`);
    try {
      body = JSON.parse(response.body);
    } catch {
      problems.push(`body is not JSON: ${response.body.slice(0, 200)}`);
      return problems;
    }
    if (response.status >= 400) {
      problems.push(...this.schemaProblems('ErrorEnvelope', body));
      const bodyRequestId = (body as { error?: { requestId?: unknown } }).error?.requestId;
      if (bodyRequestId !== requestIdHeader) problems.push(`envelope requestId ${String(bodyRequestId)} differs from X-Request-Id ${requestIdHeader}`);
    }
    if (!matched) {
      if (response.status < 400) problems.push(`${response.method} ${pathname} is no operation of the document but answered ${response.status}`);
      return problems;
    }
    const responses = matched.operation.responses as Record<string, Json>;
    const declared = responses[String(response.status)];
    if (!declared) {
      problems.push(`${matched.operationId} does not list status ${response.status} (lists ${Object.keys(responses).join(', ')})`);
      return problems;
    }
    const spec = resolveRef(declared);
    for (const [name, headerSpec] of Object.entries((spec.headers ?? {}) as Record<string, Json>)) {
      const h = resolveRef(headerSpec);
      const value = header(response.headers, name.toLowerCase());
      if (value === undefined) {
        if (h.required === true) problems.push(`${matched.operationId} ${response.status}: required header ${name} missing`);
        continue;
      }
      const schema = h.schema as Json;
      const typed = schema.type === 'integer' ? (/^-?[0-9]+$/.test(value) ? Number(value) : value) : value;
      const validate = this.validatorFor(schema);
      if (!validate(typed)) problems.push(`header ${name}=${value} invalid: ${this.ajv.errorsText(validate.errors)}`);
    }
    const schema = ((spec.content as Json | undefined)?.['application/json'] as Json | undefined)?.schema as Json | undefined;
    if (schema) {
      const validate = this.validatorFor(schema);
      if (!validate(body)) problems.push(`${matched.operationId} ${response.status} body invalid: ${this.ajv.errorsText(validate.errors)}`);
    }
    return problems;
  }
}

/** Rewrites `#/components/...` refs to point into the hosted document. */
function rebase(schema: Json): Json {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${DOCUMENT_ID}#/components/`)) as Json;
}

function header(headers: ObservedResponse['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}
