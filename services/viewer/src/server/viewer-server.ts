import type { RequestListener } from 'node:http';
import { createRoutePipeline, type RouteServices } from '@chat/http-kit';
import { createViewerRoutes, VIEWER_DIST_DIR } from './bundle-routes.ts';
import type { ViewerConfig } from './viewer-config.ts';
import { plainText } from './viewer-routes.ts';

/**
 * The request listener of the viewer's own server: the page, its config and its assets (the same
 * routes, headers and CSP as in the all-in-one), and a plain 404 for anything else (the ingress sends
 * the API's paths to the API).
 */
export function createViewerListener(config: ViewerConfig, services: RouteServices, directory: string = VIEWER_DIST_DIR): RequestListener {
  return createRoutePipeline([createViewerRoutes(() => config, services, directory)], {
    notFound: (_req, res) => {
      res.setHeader('X-Content-Type-Options', 'nosniff');
      plainText(res, 404, 'not found\n');
    },
  }).listener;
}
