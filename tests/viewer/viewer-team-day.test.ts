import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { ulid } from 'ulid';
import { ApiClient } from '../harness/api-client.ts';
import { startChatProcess } from '../harness/chat-process.ts';
import { DevCoreClient } from '../harness/dev-core-client.ts';
import { canListen } from '../harness/free-port.ts';
import { deploymentEnv } from '../harness/stacks.ts';
import { startDistributedCluster, type DistributedCluster } from '../inbox/distributed-cluster.ts';
import { clickThroughSignIn, installViewerApp, launchChromium, personAt, signInByClicking, ViewerEdge } from './viewer-world.ts';

/** The demo fixture's repository `acme/web`, where `u_alice` writes and `u_bob` reads. */
const DEMO_REPOSITORY = '01JGFJJZ00QNYBVPQTAT49MN0F';
/** The ports `pnpm start` takes when none are given: the viewer's page and the all-in-one's dev-core. */
const DEFAULT_PORT = 8080;
const DEFAULT_DEV_CORE_PORT = 8081;

/** What the test needs of a running deployment besides the browser. */
interface Deployment {
  /** The origin a person types into the address bar. */
  origin: string;
  api: ApiClient;
  core: DevCoreClient;
}

interface Notification {
  notificationId: string;
  messageId: string;
  cursor: string;
  acknowledged: boolean;
}

/** u_bob's inbox in the demo repository, read through the API with a token of his own. */
async function bobsInbox(deployment: Deployment): Promise<{ items: Notification[]; acknowledgedCursor: string | null }> {
  const token = await deployment.core.mintToken({ type: 'human', subjectId: 'u_bob' });
  const res = await deployment.api.send<{ items: Notification[]; acknowledgedCursor?: string | null }>({ method: 'GET', path: `/v1/repositories/${DEMO_REPOSITORY}/inbox?limit=200`, headers: { authorization: `Bearer ${token}` } });
  expect(res.status).to.equal(200);
  return { items: res.body.items, acknowledgedCursor: res.body.acknowledgedCursor ?? null };
}

/** The inbox count in the page's header, once it reads `expected`. */
async function inboxCountReads(page: Page, expected: number): Promise<void> {
  await page.locator('.inbox-toggle .count').filter({ hasText: new RegExp(`^${expected}$`) }).waitFor({ timeout: 15_000 });
}

/**
 * A team's day in the viewer, only by clicking and typing: two people sign in through core's page,
 * u_alice picks the room from core's list with the filter and mentions u_bob through the picker,
 * u_bob sees it live with his inbox count up, follows the notification to the highlighted message
 * and marks it read, and u_alice's copied permalink, opened in a fresh browser, lands on the message
 * after sign-in.
 */
async function teamDay(browser: Browser, deployment: Deployment): Promise<void> {
  const { origin } = deployment;
  const alice = await personAt(browser);
  const bob = await personAt(browser);
  // The link action writes to the clipboard, from which the test reads the permalink as a paste would.
  await alice.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const stranger = await personAt(browser);
  try {
    // 1. Both sign in through core's sign-in page, each in a browser of their own.
    await Promise.all([signInByClicking(alice.page, origin, 'u_alice'), signInByClicking(bob.page, origin, 'u_bob')]);
    const before = await bobsInbox(deployment);
    const unreadBefore = before.items.filter((n) => !n.acknowledged).length;
    await inboxCountReads(bob.page, unreadBefore);

    // 2. u_alice finds the room by typing in the filter and clicking it: her other repository drops out.
    const filter = alice.page.getByLabel('Filter rooms');
    await filter.click();
    await alice.page.keyboard.type('web');
    await alice.page.locator('nav.rooms li.repository > a', { hasText: 'acme/legacy' }).waitFor({ state: 'detached' });
    expect(await alice.page.locator('nav.rooms li.repository > a').allTextContents()).to.deep.equal(['acme/web']);
    await alice.page.locator('nav.rooms li.repository > a', { hasText: 'acme/web' }).click();
    await alice.page.waitForURL((url) => url.hash === `#/r/${DEMO_REPOSITORY}`);
    expect(await alice.page.locator('#room-title').textContent()).to.equal('acme/web');
    await alice.page.locator('.connection[data-state="open"]').waitFor();

    // The mention is chosen in the picker with the keyboard alone.
    const tag = ulid();
    await alice.page.getByLabel('Message (Markdown)').click();
    await alice.page.keyboard.type('Standup: @u_b');
    const options = alice.page.getByRole('listbox').getByRole('option');
    // Core's member directory is read once the picker opens: u_bob shows when it has answered.
    await options.filter({ hasText: 'u_bob' }).waitFor();
    expect(await options.evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.principalId))).to.deep.equal(['u_bob']);
    expect(await options.first().getAttribute('aria-selected')).to.equal('true');
    await alice.page.keyboard.press('Enter');
    await alice.page.getByRole('listbox').waitFor({ state: 'detached' });
    await alice.page.keyboard.type(`can you review ${tag}?`);
    await alice.page.keyboard.press('Enter');
    const sent = alice.page.locator('li.message', { hasText: tag });
    await sent.locator('.mention').waitFor({ timeout: 15_000 });
    const messageId = (await sent.getAttribute('data-message-id'))!;

    // 3. u_bob sees it arrive live, his mention marked as his, and his inbox count rise.
    const received = bob.page.locator(`li.message.mentions-self[data-message-id="${messageId}"]`);
    await received.waitFor({ timeout: 15_000 });
    expect(await received.locator('.mention.mention-self').textContent()).to.equal('@u_bob');
    await inboxCountReads(bob.page, unreadBefore + 1);

    // 4. He opens the inbox, clicks the notification and lands on the message, highlighted and in view.
    const notification = (await bobsInbox(deployment)).items.find((n) => n.messageId === messageId)!;
    expect(notification, 'a notification for the mention').to.not.equal(undefined);
    await bob.page.getByRole('button', { name: /^Inbox/ }).click();
    const entry = bob.page.locator(`li.notification[data-notification-id="${notification.notificationId}"]`);
    await entry.getByRole('link', { name: /u_alice mentioned you/ }).click();
    const highlighted = bob.page.locator('li.message.highlighted');
    await highlighted.waitFor();
    expect(await highlighted.getAttribute('data-message-id')).to.equal(messageId);
    await expectInView(bob.page, highlighted);
    // Marked read: the notification leaves the inbox, the count goes down and the checkpoint moves to it.
    await entry.getByRole('button', { name: /^Mark read through this mention from u_alice$/ }).click();
    await entry.waitFor({ state: 'detached' });
    const after = await bobsInbox(deployment);
    expect(after.acknowledgedCursor, "u_bob's inbox checkpoint").to.equal(notification.cursor);
    const unreadAfter = after.items.filter((n) => !n.acknowledged).length;
    expect(unreadAfter).to.be.below(unreadBefore + 1);
    await inboxCountReads(bob.page, unreadAfter);

    // 5. u_alice copies the message's permalink; a fresh browser opens it, signs in and lands on it.
    await sent.hover();
    await sent.getByRole('link', { name: 'link' }).click();
    await alice.page.locator('[aria-live="polite"]', { hasText: 'Link to the message copied' }).waitFor();
    const permalink = await alice.page.evaluate(() => navigator.clipboard.readText());
    expect(permalink).to.match(new RegExp(`^${origin}/#/r/${DEMO_REPOSITORY}/m/${messageId}/[A-Za-z0-9_-]{36}$`));
    await stranger.page.goto(permalink);
    await clickThroughSignIn(stranger.page, 'u_bob');
    await stranger.page.waitForURL((url) => url.href === permalink);
    const landed = stranger.page.locator('li.message.highlighted');
    await landed.waitFor();
    expect(await landed.getAttribute('data-message-id')).to.equal(messageId);
    await expectInView(stranger.page, landed);

    expect([...alice.problems, ...bob.problems, ...stranger.problems]).to.deep.equal([]);
  } finally {
    for (const person of [alice, bob, stranger]) await person.context.close();
  }
}

/** Fails unless the element is at least partly inside the timeline's visible frame. */
async function expectInView(page: Page, element: ReturnType<Page['locator']>): Promise<void> {
  const box = (await element.boundingBox())!;
  const frame = (await page.locator('.timeline').boundingBox())!;
  expect(box.y + box.height > frame.y && box.y < frame.y + frame.height, 'the message is in view').to.equal(true);
}

/**
 * Skips the test when something else listens on a port the variant needs; mocha's skip takes no
 * reason, so the reason goes into the title the reporter prints.
 */
async function skipUnlessFree(context: Mocha.Context, ports: number[]): Promise<void> {
  for (const port of ports) {
    if (await canListen(port)) continue;
    if (context.test) context.test.title += ` (skipped: port ${port} on 127.0.0.1 is taken by another process)`;
    context.skip();
  }
}

describe("viewer: a team's day by clicking and typing, in the all-in-one", function () {
  this.timeout(240_000);
  let browser: Browser;

  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  /** An all-in-one on `ports` (or free ones), on a database of its own, for one day's path. */
  async function inAllInOne(label: string, ports: { port: number; devCorePort: number } | undefined): Promise<void> {
    const deployment = await deploymentEnv('postgres', label);
    const chat = await startChatProcess({ name: `chat[${label}]`, env: deployment.env, ...(ports ? { ports } : {}) });
    const core = new DevCoreClient(chat.coreUrl);
    const api = new ApiClient(chat.url);
    try {
      // The all-in-one registered its own callback at its dev-core; the test installs the app for both people.
      await installViewerApp(core, ['u_alice', 'u_bob']);
      await teamDay(browser, { origin: chat.url, api, core });
    } finally {
      api.close();
      await chat.stop();
      await deployment.drop();
    }
  }

  it(`on the default ports (${DEFAULT_PORT}, dev-core on ${DEFAULT_DEV_CORE_PORT})`, async function () {
    await skipUnlessFree(this, [DEFAULT_PORT, DEFAULT_DEV_CORE_PORT]);
    await inAllInOne('viewer_day_default', { port: DEFAULT_PORT, devCorePort: DEFAULT_DEV_CORE_PORT });
  });

  it('on other ports', async () => {
    await inAllInOne('viewer_day_other', undefined);
  });
});

describe("viewer: a team's day by clicking and typing, in the distributed deployment", function () {
  this.timeout(240_000);
  let browser: Browser;
  let cluster: DistributedCluster;
  let api: ApiClient;

  before(async () => {
    // A notifier besides the API and the gateway: it turns the mention into u_bob's notification.
    [cluster, browser] = await Promise.all([startDistributedCluster({ apis: 1, gateways: 1, notifiers: 1 }), launchChromium()]);
    api = new ApiClient(cluster.apis[0]!.url);
  });
  after(async () => {
    api?.close();
    await browser?.close();
    await cluster?.stop();
  });

  /** The viewer's edge on `port` (or a free one), registered at core as the operator registers VIEWER_PUBLIC_URL. */
  async function atEdge(port: number | undefined): Promise<void> {
    const edge = new ViewerEdge({ apiUrl: cluster.apis[0]!.url, gatewayUrl: cluster.gateways[0]!.url, coreUrl: cluster.core.url, ...(port === undefined ? {} : { port }) });
    await edge.start();
    try {
      if (port !== undefined) expect(edge.url).to.equal(`http://127.0.0.1:${port}`);
      await installViewerApp(cluster.core, ['u_alice', 'u_bob'], edge.url);
      await teamDay(browser, { origin: edge.url, api, core: cluster.core });
    } finally {
      await edge.stop();
    }
  }

  it(`at an edge on the default port (${DEFAULT_PORT})`, async function () {
    await skipUnlessFree(this, [DEFAULT_PORT]);
    await atEdge(DEFAULT_PORT);
  });

  it('at an edge on another port', async () => {
    await atEdge(undefined);
  });
});
