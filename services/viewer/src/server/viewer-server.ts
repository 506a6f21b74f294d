import type { RequestListener } from 'node:http';
import { createHttpEntry, setResponseRequestId } from '@chat/http-kit';
import { createViewerRoutes, VIEWER_DIST_DIR } from './bundle-routes.ts';
import type { ViewerConfig } from './viewer-config.ts';

/**
 * The request listener of the viewer's own server: the page, its config and its assets (the same
 * routes, headers and CSP as in the all-in-one), and a plain 404 for anything else (the ingress sends
 * the API's paths to the API).
 */
export function createViewerListener(config: ViewerConfig, directory: string = VIEWER_DIST_DIR): RequestListener {
  return createHttpEntry(
    createViewerRoutes(() => config, directory),
    (req, res) => {
      setResponseRequestId(req, res);
      res.statusCode = 404;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.end('not found\n');
    },
  );
}
