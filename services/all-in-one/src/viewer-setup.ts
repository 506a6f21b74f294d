import { defaultCommitUrlTemplate, type ViewerConfig } from '@chat/viewer';

/** The viewer's marketplace app at core (dev-core's demo fixture registers it). */
const VIEWER_CLIENT_ID = 'chat-viewer';

/** Rooms of dev-core's demo fixture, offered on the viewer's room list. */
const DEMO_ROOMS: ViewerConfig['rooms'] = [
  { repositoryId: '01JGFJJZ00QNYBVPQTAT49MN0F', label: 'demo repository' },
  { repositoryId: '01JGFJJZ00QNYBVPQTAT49MN0F', branchId: '01JGFJJZZ89S40WZVASPCBT80G', label: 'demo · branch room' },
  { repositoryId: '01JGFJK1XRGVD3BX64YJ5R47M7', label: 'archived repository (sealed)' },
];

/** The viewer's settings in the all-in-one: chat on this origin, core where the process reaches it. */
export function viewerConfig(input: { url: string; coreUrl: string; demo: boolean }): ViewerConfig {
  return {
    chatUrl: '',
    coreUrl: input.coreUrl,
    clientId: VIEWER_CLIENT_ID,
    redirectUri: `${input.url}/callback`,
    commitUrlTemplate: defaultCommitUrlTemplate(input.coreUrl),
    rooms: input.demo ? DEMO_ROOMS : [],
  };
}
