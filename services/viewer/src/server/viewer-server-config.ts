/**
 * The settings of the viewer's own static server (`src/main.ts`, the distributed deployment), read
 * from the environment once at start. The page gets them from `/viewer-config.json`.
 */
import { adminFields, adminHostOf, httpConfigOf, httpFields, loadConfig, logConfigOf, logFields, port, type HttpServerConfig } from '@chat/service-config';
import { z } from 'zod';
import { defaultCommitUrlTemplate, type ViewerConfig } from './viewer-config.ts';

const room = z.object({ repositoryId: z.string().min(1), branchId: z.string().min(1).optional(), label: z.string().min(1) }).strict();

const rooms = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'not JSON' });
      return z.NEVER;
    }
  })
  .pipe(z.array(room));

const httpsOrLoopback = z
  .string()
  .url()
  .refine((url) => /^https:/.test(url) || /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:|\/|$)/.test(url), 'must be https (plain http only on a loopback host)')
  .transform((url) => url.replace(/\/+$/, ''));

export const ViewerEnvSchema = z.object({
  ...httpFields,
  ...adminFields,
  ...logFields,
  VIEWER_ADMIN_PORT: port.default(9094).describe("admin server port of the viewer's static server (`/healthz`, `/readyz`, `/metrics`); 0 picks a free one"),
  VIEWER_PUBLIC_URL: httpsOrLoopback.describe("the viewer's public origin, which is also chat's (the API sends no CORS headers); its `/callback` is the redirect URI registered at core"),
  VIEWER_CORE_URL: httpsOrLoopback.describe("core's public base URL as a browser reaches it: the handoff bridge, the token exchange and commit pages"),
  VIEWER_CLIENT_ID: z.string().min(1).default('chat-viewer').describe("the viewer's marketplace `client_id` at core"),
  VIEWER_COMMIT_URL_TEMPLATE: z.string().url().optional().describe('a commit page with `{repositoryId}` and `{sha}`; default `<VIEWER_CORE_URL>/repositories/{repositoryId}/commits/{sha}`'),
  VIEWER_ROOMS: rooms.default([]).describe('JSON array of `{repositoryId, branchId?, label}` listed when the room list from core cannot be read'),
});

export interface ViewerServerConfig {
  log: { level: string };
  http: HttpServerConfig;
  admin: { host: string; port: number };
  viewer: ViewerConfig;
}

/** Parses the environment; a bad value fails the start with every bad variable named. */
export function loadViewerServerConfig(env: NodeJS.ProcessEnv): ViewerServerConfig {
  return loadConfig(ViewerEnvSchema, env, (e) => ({
    log: logConfigOf(e),
    http: httpConfigOf(e),
    admin: { host: adminHostOf(e), port: e.VIEWER_ADMIN_PORT },
    viewer: {
      chatUrl: '',
      coreUrl: e.VIEWER_CORE_URL,
      clientId: e.VIEWER_CLIENT_ID,
      redirectUri: `${e.VIEWER_PUBLIC_URL}/callback`,
      commitUrlTemplate: e.VIEWER_COMMIT_URL_TEMPLATE ?? defaultCommitUrlTemplate(e.VIEWER_CORE_URL),
      rooms: e.VIEWER_ROOMS,
    },
  }));
}
