import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { DevCoreContext } from '../domain/dev-core-context.ts';
import { answerAuthorize, answerAuthorizeBatch, serviceTokenMatcher, type InternalAnswer } from './internal.routes.ts';

/** The routes chat calls on every request it serves, answered without express. */
const PLAIN_ROUTES: Record<string, (ctx: DevCoreContext, body: unknown) => InternalAnswer> = {
  '/internal/v1/authorize': answerAuthorize,
  '/internal/v1/authorize/batch': answerAuthorizeBatch,
};

/**
 * dev-core's request listener. Chat asks `POST /internal/v1/authorize` (or its batch form) on every
 * request it serves, so those routes are answered without express when the request is plain (JSON
 * with a declared length): the same steps in the same order as the express app (body, fault, service
 * token, validation, decision) and the same answers. Everything else goes to `app`.
 */
export function createDevCoreListener(ctx: DevCoreContext, app: RequestListener): RequestListener {
  const serviceTokenMatches = serviceTokenMatcher(ctx);
  return (req, res) => {
    const answer = req.method === 'POST' && req.url !== undefined ? PLAIN_ROUTES[req.url] : undefined;
    if (answer === undefined || !isPlainJson(req)) {
      app(req, res);
      return;
    }
    void answerPlain(ctx, serviceTokenMatches, answer, req, res).catch((err: unknown) => {
      ctx.logger.error({ err }, 'unexpected error');
      if (!res.headersSent) send(res, 500, { error: { code: 'internal', message: 'internal error' } });
      else res.destroy();
    });
  };
}

async function answerPlain(
  ctx: DevCoreContext,
  serviceTokenMatches: (header: string | undefined) => boolean,
  answer: (ctx: DevCoreContext, body: unknown) => InternalAnswer,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  ctx.calls.record(req.url ?? '');
  let body: unknown;
  try {
    body = await readJson(req);
  } catch {
    return send(res, 400, { error: { code: 'request_invalid', message: 'request body could not be read' } });
  }
  const fault = ctx.faults.current;
  if (fault.authorization === 'unavailable') return send(res, 503, { error: { code: 'unavailable', message: 'authorization is unavailable' } });
  if (fault.authorization === 'slow') await delay(fault.latencyMs);
  if (!serviceTokenMatches(req.headers.authorization)) {
    return send(res, 401, { error: { code: 'service_unauthenticated', message: 'service token missing or wrong' } });
  }
  const { status, body: answerBody } = answer(ctx, body);
  send(res, status, answerBody);
}

function isPlainJson(req: IncomingMessage): boolean {
  const { headers } = req;
  return (
    headers['transfer-encoding'] === undefined &&
    headers['content-encoding'] === undefined &&
    headers['content-length'] !== undefined &&
    /^[0-9]{1,6}$/.test(headers['content-length']) &&
    /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i.test(headers['content-type'] ?? '')
  );
}

/** body-parser's strict JSON: `{}` for an empty body, only an object or array at the top. */
function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.once('error', reject);
    req.once('end', () => {
      let text = Buffer.concat(chunks).toString('utf8');
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (text.length === 0) return resolve({});
      const first = /^[ \t\n\r]*(.)/.exec(text)?.[1];
      if (first !== '{' && first !== '[') return reject(new Error('not an object or array'));
      try {
        resolve(JSON.parse(text));
      } catch (err) {
        reject(err);
      }
    });
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
