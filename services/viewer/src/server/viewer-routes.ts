import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PublicRoute, RouteServices, RouteTable } from '@chat/http-kit';
import { bundleFile, type BundleFile } from './static-bundle.ts';
import type { ViewerConfig } from './viewer-config.ts';

/** The page's own files are hashed by content, so a browser may keep them for good. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

function origin(url: string): string | undefined {
  try {
    return url ? new URL(url).origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The page's Content-Security-Policy: scripts and styles from this origin only (no inline script, no
 * eval), network calls to chat and core only, images from this origin or data URLs (so a message
 * cannot make the browser fetch a third-party image), and no framing, plugins, base or form targets.
 */
export function contentSecurityPolicy(config: ViewerConfig): string {
  const connect = new Set(["'self'"]);
  for (const url of [config.chatUrl, config.coreUrl]) {
    const o = origin(url);
    if (o) connect.add(o);
  }
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src ${[...connect].join(' ')}`,
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}

function send(req: IncomingMessage, res: ServerResponse, file: BundleFile, cacheControl: string, csp: string): void {
  res.setHeader('Content-Type', file.contentType);
  res.setHeader('Cache-Control', cacheControl);
  res.setHeader('ETag', file.etag);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  if (file.contentType.startsWith('text/html')) {
    res.setHeader('Content-Security-Policy', csp);
    res.setHeader('X-Frame-Options', 'DENY');
  }
  if (file.gzipped) res.setHeader('Vary', 'Accept-Encoding');
  if (req.headers['if-none-match'] === file.etag) {
    res.statusCode = 304;
    res.end();
    return;
  }
  const gzip = file.gzipped !== undefined && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  const body = gzip ? file.gzipped! : file.body;
  if (gzip) res.setHeader('Content-Encoding', 'gzip');
  res.setHeader('Content-Length', body.length);
  res.statusCode = 200;
  // Node sends no body to a HEAD request: the same headers, Content-Length included, and nothing else.
  res.end(body);
}

/** A short plain-text answer, never cached, its length declared so a HEAD answer carries it too. */
export function plainText(res: ServerResponse, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** Without `pnpm build` there is no bundle; the API still runs, and the page says what to do. */
function notBuilt(res: ServerResponse): void {
  plainText(res, 503, 'The viewer is not built yet: run `pnpm build`, then start again.\n');
}

/**
 * The viewer's routes: the page at `/` and at `/callback` (the OAuth callback, never cached, as its
 * address carries a one-time code), its hashed assets under `/assets/`, and `/viewer-config.json`.
 * The pipeline answers HEAD as GET without the body, and gives each answer its `X-Request-Id` (a
 * malformed one from the client is replaced: a page's files are worth no 400).
 */
export function viewerRoutes(bundle: Map<string, BundleFile>, config: () => ViewerConfig, services: RouteServices): RouteTable {
  const table = (routes: PublicRoute[]): RouteTable => ({ service: 'viewer', services, routes, malformedRequestId: 'replace' });
  const page = (serve: (req: IncomingMessage, res: ServerResponse) => void): PublicRoute[] =>
    ['/', '/callback'].map((path) => ({ method: 'GET', path, access: 'public', handle: ({ req, res }) => serve(req, res) }));
  const index = bundle.get('/index.html');
  if (!index) return table(page((_req, res) => notBuilt(res)));
  // Read on first use: a process knows its own address (part of the config) only once it listens.
  let settled: { csp: string; configFile: BundleFile } | undefined;
  const settle = () => (settled ??= { csp: contentSecurityPolicy(config()), configFile: bundleFile(Buffer.from(JSON.stringify(config())), 'application/json; charset=utf-8') });
  return table([
    ...page((req, res) => send(req, res, index, 'no-store', settle().csp)),
    { method: 'GET', path: '/viewer-config.json', access: 'public', handle: ({ req, res }) => send(req, res, settle().configFile, 'no-cache', settle().csp) },
    {
      method: 'GET',
      path: '/assets/:file',
      access: 'public',
      handle: ({ req, res, params }) => {
        const file = bundle.get(`/assets/${params.file}`);
        if (file) send(req, res, file, IMMUTABLE, settle().csp);
        else plainText(res, 404, 'not found\n');
      },
    },
  ]);
}
