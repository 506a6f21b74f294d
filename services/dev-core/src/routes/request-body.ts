import type { IncomingMessage } from 'node:http';
import { parse as parseForm } from 'node:querystring';
import { AppError } from '@chat/contracts';
import { readJsonBody } from '@chat/http-kit';
import getRawBody from 'raw-body';
import { CoreRefusalError } from './http-errors.ts';

/** Largest JSON body dev-core reads: a whole fixture comes as one. @defaultValue 5 MiB */
export const JSON_BODY_LIMIT_BYTES = 5 * 1024 * 1024;

/** Largest HTML form body: the sign-in form and a token exchange are a few hundred bytes. @defaultValue 16 KiB */
export const FORM_BODY_LIMIT_BYTES = 16 * 1024;

const JSON_TYPE = /^application\/json[ \t]*(?:;|$)/i;
const FORM_TYPE = /^application\/x-www-form-urlencoded[ \t]*(?:;|$)/i;

const unreadable = (): CoreRefusalError => new CoreRefusalError(400, 'request_invalid', 'request body could not be read');

/**
 * The JSON body of a request that says it carries one (`application/json`), read by the pipeline's
 * reader (UTF-8, an object or an array, `{}` when empty); undefined for any other content type, which
 * each route's schema then refuses as missing. A body that cannot be read is 400 `request_invalid`.
 */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  if (!JSON_TYPE.test(req.headers['content-type'] ?? '')) return undefined;
  try {
    return await readJsonBody(req, JSON_BODY_LIMIT_BYTES);
  } catch (err) {
    throw err instanceof AppError ? unreadable() : err;
  }
}

/**
 * The body of an endpoint a browser form or an OAuth client posts to: an HTML form
 * (`application/x-www-form-urlencoded`, UTF-8, a repeated name read as an array) or JSON as
 * {@link readJson} reads it; undefined for any other content type.
 */
export async function readFormOrJson(req: IncomingMessage): Promise<unknown> {
  if (!FORM_TYPE.test(req.headers['content-type'] ?? '')) return readJson(req);
  const coding = req.headers['content-encoding'];
  if (coding !== undefined && coding.toLowerCase() !== 'identity') throw unreadable();
  let raw: Buffer;
  try {
    raw = await getRawBody(req, { limit: FORM_BODY_LIMIT_BYTES, length: req.headers['content-length'] ?? null });
  } catch {
    throw unreadable();
  }
  return parseForm(raw.toString('utf8'));
}
