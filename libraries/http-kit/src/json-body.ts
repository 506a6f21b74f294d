import type { IncomingMessage } from 'node:http';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';
import { parse as parseContentType } from 'content-type';
import getRawBody from 'raw-body';
import { AppError } from '@chat/contracts';

/** The content codings a body may arrive in; the limit applies to the decoded bytes. */
const DECODERS: Record<string, (() => NodeJS.ReadWriteStream) | undefined> = {
  identity: undefined,
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/**
 * Reads a JSON request body: `application/json` in UTF-8, optionally gzip-, deflate- or
 * br-coded, at most `limitBytes` once decoded, and an object or an array at the top level (an empty
 * body is `{}`, a leading BOM is dropped). Every refusal is 400 `REQUEST_INVALID`, since the spec
 * lists no 413 or 415 for these operations.
 */
export async function readJsonBody(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  const type = contentTypeOf(req);
  if (type?.type !== 'application/json') {
    throw new AppError('REQUEST_INVALID', 'The request body must be application/json.');
  }
  const charset = type.parameters.charset?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') throw new AppError('REQUEST_INVALID', 'The request body must be UTF-8.');
  const coding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (!(coding in DECODERS)) throw new AppError('REQUEST_INVALID', `The content coding "${coding}" is not supported.`);
  const decoder = DECODERS[coding]?.();
  let raw: Buffer;
  try {
    raw = decoder ? await getRawBody(decoded(req, decoder), { limit: limitBytes }) : await getRawBody(req, { limit: limitBytes, length: req.headers['content-length'] ?? null });
  } catch (err) {
    throw bodyReadError(err);
  }
  let text = raw.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (/^[ \t\n\r]*$/.test(text)) return {};
  const first = /^[ \t\n\r]*(.)/.exec(text)?.[1];
  if (first !== '{' && first !== '[') throw new AppError('REQUEST_INVALID', 'The request body must be a JSON object or array.');
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError('REQUEST_INVALID', 'The request body is not valid JSON.');
  }
}

/** The request's bytes through `decoder`; a request that fails or ends early fails the decoder too. */
function decoded(req: IncomingMessage, decoder: NodeJS.ReadWriteStream): Readable {
  const output = decoder as unknown as Readable;
  const abort = (): void => void output.destroy(Object.assign(new Error('request aborted'), { type: 'request.aborted' }));
  req.once('error', abort);
  req.once('close', () => {
    if (!req.complete) abort();
  });
  return req.pipe(decoder) as unknown as Readable;
}

function contentTypeOf(req: IncomingMessage): ReturnType<typeof parseContentType> | undefined {
  const header = req.headers['content-type'];
  if (header === undefined) return undefined;
  try {
    return parseContentType(header);
  } catch {
    return undefined;
  }
}

/** raw-body's and zlib's failures, as the client's fault they are. */
function bodyReadError(err: unknown): AppError {
  const type = (err as { type?: unknown } | null)?.type;
  if (type === 'entity.too.large') return new AppError('REQUEST_INVALID', 'The request body is too large.');
  if (type === 'request.size.invalid') return new AppError('REQUEST_INVALID', 'The request body is shorter or longer than its Content-Length.');
  if ((err as { code?: unknown } | null)?.code === 'Z_DATA_ERROR' || (err as { code?: unknown } | null)?.code === 'Z_BUF_ERROR') {
    return new AppError('REQUEST_INVALID', 'The request body does not match its Content-Encoding.');
  }
  return new AppError('REQUEST_INVALID', 'The request body could not be read.');
}
