/**
 * The viewer's server side: its built bundle (`dist/`, made by `pnpm build`) and the routes that
 * serve it in any process's route pipeline (the all-in-one, or the viewer's own
 * static server in the distributed deployment).
 */
export { createViewerRoutes, VIEWER_DIST_DIR } from './bundle-routes.ts';
export { contentSecurityPolicy } from './viewer-routes.ts';
export { createViewerListener } from './viewer-server.ts';
export { loadViewerServerConfig, ViewerEnvSchema, type ViewerServerConfig } from './viewer-server-config.ts';
export { defaultCommitUrlTemplate, type ViewerConfig, type ViewerRoom } from './viewer-config.ts';
