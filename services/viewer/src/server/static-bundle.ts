import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

/** One file of the built bundle, held in memory with its gzip form and validator. */
export interface BundleFile {
  body: Buffer;
  gzipped: Buffer | undefined;
  contentType: string;
  etag: string;
}

/** A file to serve: its body, compressed once when it is text, and an ETag from its content. */
export function bundleFile(body: Buffer, contentType: string): BundleFile {
  const compressible = /^(text\/|application\/json|image\/svg)/.test(contentType);
  return {
    body,
    gzipped: compressible && body.length > 512 ? gzipSync(body, { level: 9 }) : undefined,
    contentType,
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
  };
}

/**
 * Reads the built page once: `dist/index.html` and the files of `dist/assets/`, what the routes serve
 * (the same folder holds the viewer's server, bundled, which is not served). A handful of small
 * files, so serving them from memory spares a disk read per request and lets each be compressed
 * once. A missing bundle is an empty map.
 */
export function loadBundle(directory: string): Map<string, BundleFile> {
  const files = new Map<string, BundleFile>();
  const index = join(directory, 'index.html');
  if (!existsSync(index)) return files;
  files.set('/index.html', bundleFile(readFileSync(index), CONTENT_TYPES['.html']!));
  const assets = join(directory, 'assets');
  if (!existsSync(assets)) return files;
  for (const entry of readdirSync(assets, { withFileTypes: true })) {
    if (!entry.isFile() || entry.name.endsWith('.map')) continue;
    files.set(`/assets/${entry.name}`, bundleFile(readFileSync(join(assets, entry.name)), CONTENT_TYPES[extname(entry.name)] ?? 'application/octet-stream'));
  }
  return files;
}
