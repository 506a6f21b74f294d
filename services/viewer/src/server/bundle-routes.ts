/**
 * The viewer's routes over its built bundle, for any process's route pipeline (the all-in-one, or the
 * viewer's own static server in the distributed deployment).
 */
import { fileURLToPath } from 'node:url';
import type { RouteServices, RouteTable } from '@chat/http-kit';
import { loadBundle } from './static-bundle.ts';
import type { ViewerConfig } from './viewer-config.ts';
import { viewerRoutes } from './viewer-routes.ts';

/** Where `pnpm build` writes the bundle (the same folder seen from `src/server/` and `dist/server/`). */
export const VIEWER_DIST_DIR = fileURLToPath(new URL('../../dist/', import.meta.url));

/**
 * The viewer's routes over the bundle in `directory` (default: this package's `dist/`). `config` is
 * read on the first request, so it may name the address the process listens on.
 */
export function createViewerRoutes(config: () => ViewerConfig, services: RouteServices, directory: string = VIEWER_DIST_DIR): RouteTable {
  return viewerRoutes(loadBundle(directory), config, services);
}
