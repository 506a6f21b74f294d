import type { DevCoreHandle } from '@chat/dev-core';
import { defaultCommitUrlTemplate, type ViewerConfig } from '@chat/viewer';
import type { Logger } from 'pino';

/** The viewer's marketplace app at core (dev-core's demo fixture registers it). */
const VIEWER_CLIENT_ID = 'chat-viewer';

/** The viewer's OAuth callback on the all-in-one's address. */
function viewerCallback(url: string): string {
  return `${url}/callback`;
}

/**
 * The viewer's settings in the all-in-one: chat on this origin, core where the process reaches it. The
 * room list is core's (the repositories each person reads), so no rooms are configured.
 */
export function viewerConfig(input: { url: string; coreUrl: string }): ViewerConfig {
  return {
    chatUrl: '',
    coreUrl: input.coreUrl,
    clientId: VIEWER_CLIENT_ID,
    redirectUri: viewerCallback(input.url),
    commitUrlTemplate: defaultCommitUrlTemplate(input.coreUrl),
    rooms: [],
  };
}

/**
 * Registers the viewer's callback on this process's own address at its dev-core: a redirect URI is
 * matched exactly, so the fixture's callback (on the default port) would refuse every sign-in on any
 * other port. A fixture without the viewer's app keeps its registrations; the viewer then cannot sign in.
 */
export function registerViewerCallback(devCore: Pick<DevCoreHandle, 'registerAppCallback'>, url: string, logger: Pick<Logger, 'warn'>): void {
  if (!devCore.registerAppCallback(VIEWER_CLIENT_ID, viewerCallback(url))) {
    logger.warn({ clientId: VIEWER_CLIENT_ID }, "dev-core's fixture registers no viewer app, so the viewer cannot sign in");
  }
}
