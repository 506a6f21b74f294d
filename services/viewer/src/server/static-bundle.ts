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
 * Reads the built viewer (`dist/`) once: a handful of small files, so serving them from memory
 * spares a disk read per request and lets each be compressed once. A missing bundle is an empty map.
 */
export function loadBundle(directory: string): Map<string, BundleFile> {
  const files = new Map<string, BundleFile>();
  if (!existsSync(directory)) return files;
  const walk = (dir: string, prefix: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const urlPath = `${prefix}/${entry.name}`;
      if (entry.isDirectory()) {
        walk(path, urlPath);
        continue;
      }
      if (entry.name.endsWith('.map') || entry.name === 'meta.json') continue;
      files.set(urlPath, bundleFile(readFileSync(path), CONTENT_TYPES[extname(entry.name)] ?? 'application/octet-stream'));
    }
  };
  walk(directory, '');
  return files;
}
