import { createServer, type Server } from 'node:http';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createHttpEntry } from '@chat/http-kit';
import { createViewerRoutes, defaultCommitUrlTemplate, type ViewerConfig } from '@chat/viewer';
import type { DevCoreClient, FixtureApp, FixtureInstallation } from '../harness/dev-core-client.ts';
import { closeServer, listenOnLoopback, proxyRequest } from '../harness/streaming-proxy.ts';

/** Debian's Chromium, as the other browser tests run it; playwright never downloads a browser here. */
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

/** The viewer's app at core: registered for `origin`'s callback and installed, with both scopes, for `userIds`. */
export async function installViewerApp(core: DevCoreClient, origin: string, userIds: string[]): Promise<void> {
  const fixture = (await core.getFixture()) as { apps?: FixtureApp[]; installations?: FixtureInstallation[] };
  const app: FixtureApp = { clientId: 'chat-viewer', redirectUri: `${origin}/callback`, scopes: ['chat', 'core:commits:read'] };
  const installations = (fixture.installations ?? []).filter((i) => !(i.clientId === app.clientId && userIds.includes(i.userId)));
  for (const userId of userIds) installations.push({ clientId: app.clientId, userId, scopes: ['chat', 'core:commits:read'], state: 'active' });
  await core.putFixture({ ...fixture, apps: [...(fixture.apps ?? []).filter((a) => a.clientId !== app.clientId), app], installations });
}

/** A page of a fresh browser context whose core web session belongs to `userId` (dev-core's development sign-in). */
export async function personAt(browser: Browser, coreUrl: string, userId: string): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
  const answer = await context.request.post(`${coreUrl}/dev/session`, { data: { userId } });
  if (!answer.ok()) throw new Error(`dev-core refused the session for ${userId}: ${answer.status()}`);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('dialog', (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return { context, page, problems };
}

/** Opens the viewer at `hash` and signs in through core's handoff; answers once the room is live. */
export async function signInTo(page: Page, origin: string, hash: string): Promise<void> {
  await page.goto(`${origin}/${hash}`);
  await page.getByRole('button', { name: 'Sign in with core' }).click();
  await page.waitForURL((url) => url.pathname === '/' && url.hash === hash);
  await waitLive(page);
}

/** Waits until the room's stream is open. */
export async function waitLive(page: Page, timeout = 20_000): Promise<void> {
  await page.locator('.connection[data-state="open"]').waitFor({ timeout });
}

/** The IDs of the messages on screen, top to bottom. */
export function messageIds(page: Page): Promise<string[]> {
  return page.locator('li.message').evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.messageId ?? ''));
}

/**
 * The distributed deployment's edge for a browser: the viewer's static bundle at `/`, room and inbox
 * streams (`…/events`) to the gateway, every other `/v1` request to the API, on one origin, as the
 * ingress of `infra/k8s` routes them.
 */
export class ViewerEdge {
  private server: Server | undefined;
  url = '';

  constructor(
    private readonly targets: { apiUrl: string; gatewayUrl: string; coreUrl: string },
  ) {}

  async start(): Promise<void> {
    const api = new URL(this.targets.apiUrl);
    const gateway = new URL(this.targets.gatewayUrl);
    const config = (): ViewerConfig => ({
      chatUrl: '',
      coreUrl: this.targets.coreUrl,
      clientId: 'chat-viewer',
      redirectUri: `${this.url}/callback`,
      commitUrlTemplate: defaultCommitUrlTemplate(this.targets.coreUrl),
      rooms: [],
    });
    const server = createServer(
      createHttpEntry(createViewerRoutes(config), (req, res) => {
        const path = (req.url ?? '').split('?')[0] ?? '';
        proxyRequest(req, res, path.endsWith('/events') ? gateway : api);
      }),
    );
    this.server = server;
    this.url = await listenOnLoopback(server);
  }

  async stop(): Promise<void> {
    if (this.server) await closeServer(this.server);
  }
}

/** Changes dev-core's live fixture in place (e.g. removes a member), keeping everything else as installed. */
export async function updateFixture(core: DevCoreClient, change: (fixture: { repositories: Array<{ id: string; members: Record<string, string> }> }) => void): Promise<void> {
  const fixture = (await core.getFixture()) as { repositories: Array<{ id: string; members: Record<string, string> }> };
  change(fixture);
  await core.putFixture(fixture);
}
