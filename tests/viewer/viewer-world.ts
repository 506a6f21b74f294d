import { createServer, type Server } from 'node:http';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createRoutePipeline } from '@chat/http-kit';
import { createHttpDurationHistogram, createLogger } from '@chat/observability';
import { Registry } from 'prom-client';
import { createViewerRoutes, loadViewerServerConfig, type ViewerRoom } from '@chat/viewer';
import type { DevCoreClient, FixtureApp, FixtureInstallation } from '../harness/dev-core-client.ts';
import { closeServer, listenOnLoopback, proxyRequest } from '../harness/streaming-proxy.ts';

/** Debian's Chromium, as the other browser tests run it; playwright never downloads a browser here. */
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

/** What the viewer asks core for: chat, commit links, and the member directory of the `@` picker. */
const VIEWER_SCOPES = ['chat', 'core:commits:read', 'core:members:read'] as const;

/**
 * The viewer's app at core installed, with all its scopes, for `userIds`. With `origin`, the test
 * registers the callback on it, as the operator of the distributed deployment registers
 * `VIEWER_PUBLIC_URL`; without, the registration stays as the deployment made it (the all-in-one
 * registers its own address at its dev-core).
 */
export async function installViewerApp(core: DevCoreClient, userIds: string[], origin?: string): Promise<void> {
  const fixture = (await core.getFixture()) as { apps?: FixtureApp[]; installations?: FixtureInstallation[] };
  const registered = (fixture.apps ?? []).find((a) => a.clientId === 'chat-viewer');
  const redirectUri = origin === undefined ? registered?.redirectUri : `${origin}/callback`;
  if (redirectUri === undefined) throw new Error('no chat-viewer app is registered at core');
  const app: FixtureApp = { clientId: 'chat-viewer', redirectUri, scopes: [...VIEWER_SCOPES] };
  const installations = (fixture.installations ?? []).filter((i) => !(i.clientId === app.clientId && userIds.includes(i.userId)));
  for (const userId of userIds) installations.push({ clientId: app.clientId, userId, scopes: [...VIEWER_SCOPES], state: 'active' });
  await core.putFixture({ ...fixture, apps: [...(fixture.apps ?? []).filter((a) => a.clientId !== app.clientId), app], installations });
}

/** A page of a fresh browser context: no cookie, no storage, the CSPs as served. */
export async function personAt(browser: Browser): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // A Content-Security-Policy refusal is reported only on the console; it would stop a sign-in silently.
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  page.on('dialog', (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return { context, page, problems };
}

/**
 * Signs in as a person does, from the viewer's sign-in screen: a click on "Sign in with core", then
 * at core either its sign-in page, where a click on `userId` opens the core session, or, with a core
 * session already open, nothing to do. Answers once the viewer shows the person signed in.
 */
export async function clickThroughSignIn(page: Page, userId: string): Promise<void> {
  await page.getByRole('button', { name: 'Sign in with core' }).click();
  const atCore = page.getByRole('heading', { name: 'Sign in to core' });
  const signedIn = page.locator('.top .user', { hasText: userId });
  await atCore.or(signedIn).first().waitFor();
  if (await atCore.isVisible()) await page.getByRole('button', { name: userId, exact: true }).click();
  await signedIn.waitFor();
}

/** Opens the viewer at `hash`, signs in as `userId` by clicking, and answers once the room is live. */
export async function signInTo(page: Page, origin: string, hash: string, userId: string): Promise<void> {
  await page.goto(`${origin}/${hash}`);
  await clickThroughSignIn(page, userId);
  await page.waitForURL((url) => url.pathname === '/' && url.hash === hash);
  await waitLive(page);
}

/**
 * A person's first sign-in, in a fresh context: the viewer at `origin`, "Sign in with core", core's
 * sign-in page (its heading and the app asking, no error), a click on `userId`, and back in the
 * viewer, signed in, with the first room of its list open and live.
 */
export async function signInByClicking(page: Page, origin: string, userId: string): Promise<void> {
  await page.goto(`${origin}/`);
  await page.getByRole('button', { name: 'Sign in with core' }).click();
  await page.getByRole('heading', { name: 'Sign in to core' }).waitFor();
  const text = (await page.locator('body').textContent()) ?? '';
  if (!text.includes('to continue to chat-viewer') || /session_required|could not be authorized/.test(text)) throw new Error(`core's sign-in page reads: ${text}`);
  await page.getByRole('button', { name: userId, exact: true }).click();
  await page.locator('.top .user', { hasText: userId }).waitFor();
  await waitLive(page);
}

/** Signs out of the viewer, which shows its sign-in again, and signs back in with a click (core's session is still open). */
export async function signOutAndBackIn(page: Page, userId: string): Promise<void> {
  const hash = new URL(page.url()).hash;
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Sign in with core' }).waitFor();
  if ((await page.getByRole('alert').textContent()) !== 'You signed out.') throw new Error('no sign-out notice');
  if ((await page.evaluate(() => sessionStorage.getItem('chat-viewer.session'))) !== null) throw new Error('the session outlived the sign-out');
  await clickThroughSignIn(page, userId);
  await page.waitForURL((url) => url.hash === hash);
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
 * ingress of `infra/k8s` routes them. The viewer's settings come from its own environment, with
 * `VIEWER_PUBLIC_URL` the edge's address, whose `/callback` must be registered at core.
 */
export class ViewerEdge {
  private server: Server | undefined;
  url = '';

  constructor(
    private readonly targets: {
      apiUrl: string;
      gatewayUrl: string;
      coreUrl: string;
      rooms?: ViewerRoom[];
      /** The edge's port on 127.0.0.1. @defaultValue a port the system picks */
      port?: number;
    },
  ) {}

  async start(): Promise<void> {
    const api = new URL(this.targets.apiUrl);
    const gateway = new URL(this.targets.gatewayUrl);
    const config = () =>
      loadViewerServerConfig({ VIEWER_PUBLIC_URL: this.url, VIEWER_CORE_URL: this.targets.coreUrl, VIEWER_ROOMS: JSON.stringify(this.targets.rooms ?? []) }).viewer;
    const services = { logger: createLogger({ name: 'viewer-edge', level: 'silent' }), httpDuration: createHttpDurationHistogram(new Registry()) };
    // The ingress's routing: the viewer's paths to the viewer, the streams to the gateway, the rest to the API.
    const edge = createRoutePipeline([createViewerRoutes(config, services)], {
      notFound: (req, res) => {
        const path = (req.url ?? '').split('?')[0] ?? '';
        proxyRequest(req, res, path.endsWith('/events') ? gateway : api);
      },
    });
    const server = createServer(edge.listener);
    this.server = server;
    this.url = await listenOnLoopback(server, this.targets.port);
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
