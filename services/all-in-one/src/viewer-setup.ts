import type { DevCoreHandle } from '@chat/dev-core';
import { defaultCommitUrlTemplate, type ViewerConfig } from '@chat/viewer';
import type { Logger } from 'pino';

/** The viewer's marketplace app at core (dev-core's demo fixture registers it). */
const VIEWER_CLIENT_ID = 'chat-viewer';

/** Rooms of dev-core's demo fixture, offered on the viewer's room list. */
const DEMO_ROOMS: ViewerConfig['rooms'] = [
  { repositoryId: '01JGFJJZ00QNYBVPQTAT49MN0F', label: 'demo repository' },
  { repositoryId: '01JGFJJZ00QNYBVPQTAT49MN0F', branchId: '01JGFJJZZ89S40WZVASPCBT80G', label: 'demo · branch room' },
  { repositoryId: '01JGFJK1XRGVD3BX64YJ5R47M7', label: 'archived repository (sealed)' },
];

/** The viewer's OAuth callback on the all-in-one's address. */
function viewerCallback(url: string): string {
  return `${url}/callback`;
}

/** The viewer's settings in the all-in-one: chat on this origin, core where the process reaches it. */
export function viewerConfig(input: { url: string; coreUrl: string; demo: boolean }): ViewerConfig {
  return {
    chatUrl: '',
    coreUrl: input.coreUrl,
    clientId: VIEWER_CLIENT_ID,
    redirectUri: viewerCallback(input.url),
    commitUrlTemplate: defaultCommitUrlTemplate(input.coreUrl),
    rooms: input.demo ? DEMO_ROOMS : [],
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
