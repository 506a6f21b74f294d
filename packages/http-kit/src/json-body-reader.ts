import type { IncomingMessage } from 'node:http';

/**
 * The plain JSON request the fast routes read themselves: `application/json` (UTF-8 or no charset),
 * no content coding, a declared length within `limitBytes`. Anything else (chunked, gzip, another
 * charset or type, too large) is left to express and body-parser, so every odd request keeps the
 * answer it had.
 */
export function isPlainJsonRequest(req: IncomingMessage, limitBytes: number): boolean {
  const { headers } = req;
  if (headers['transfer-encoding'] !== undefined) return false;
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
  const length = headers['content-length'];
  if (length === undefined || !/^[0-9]{1,9}$/.test(length) || Number(length) > limitBytes) return false;
  const type = headers['content-type'];
  return type !== undefined && PLAIN_JSON_TYPE.test(type);
}

const PLAIN_JSON_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/** Failures typed as body-parser types them, so the one error writer answers both paths alike. */
function bodyError(type: 'entity.parse.failed' | 'request.aborted', message: string): Error {
  return Object.assign(new Error(message), { type });
}

/**
 * Reads a body {@link isPlainJsonRequest} accepted and parses it the way body-parser's strict JSON
 * parser does: an empty body is `{}`, a leading BOM is dropped, and only an object or an array is
 * accepted at the top level.
 */
export function readJsonBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('aborted', () => reject(bodyError('request.aborted', 'request aborted')));
    req.once('error', (err) => reject(Object.assign(err, { type: 'request.aborted' })));
    req.once('end', () => {
      const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      let text = raw.toString('utf8');
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      const first = /^[ \t\n\r]*(.)/.exec(text)?.[1];
      if (text.length === 0) return resolve({});
      if (first !== '{' && first !== '[') return reject(bodyError('entity.parse.failed', 'body is not a JSON object or array'));
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(bodyError('entity.parse.failed', 'body is not valid JSON'));
      }
    });
  });
}
