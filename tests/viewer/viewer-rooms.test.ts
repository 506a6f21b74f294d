import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { ApiClient, type RoomScope } from '../harness/api-client.ts';
import { expectStatus } from '../harness/assertions.ts';
import { startChatProcess, type ChatProcess } from '../harness/chat-process.ts';
import { DevCoreClient } from '../harness/dev-core-client.ts';
import { SharedFixture, type Scenario } from '../harness/fixture-factory.ts';
import { Actors, deploymentEnv } from '../harness/stacks.ts';
import { installViewerApp, launchChromium, personAt, signInByClicking, waitLive } from './viewer-world.ts';

/** The row of the room list that links to `hash`. */
function roomRow(page: Page, hash: string) {
  return page.locator('nav.rooms li', { has: page.locator(`a[href="${hash}"]`) }).last();
}

/**
 * The room list comes from core: the repositories the person reads with their branches by name, a
 * filter box, names in the room header, a branch linked by name, and unread counts since the reader
 * last saw a room, with a "new messages" divider above the first unread message when it opens.
 */
describe('viewer: rooms from core, with unread counts and a new-messages divider', function () {
  this.timeout(180_000);
  let chat: ChatProcess;
  let browser: Browser;
  let api: ApiClient;
  let scenario: Scenario;
  let actors: Actors;
  let deployment: Awaited<ReturnType<typeof deploymentEnv>>;
  /** Names unique to this run, so the filter finds this scenario's repositories only. */
  let names: { web: string; docs: string; attic: string };
  let branchRoom: RoomScope;
  const branchHash = () => `#/r/${scenario.repositoryId}/b/${scenario.branchId}`;
  const docsHash = () => `#/r/${scenario.otherRepositoryId}`;

  before(async () => {
    deployment = await deploymentEnv('postgres', 'viewer_rooms');
    [chat, browser] = await Promise.all([startChatProcess({ name: 'chat[viewer-rooms]', env: { ...deployment.env, APPEND_RATE_LIMIT: '100000' } }), launchChromium()]);
    const core = new DevCoreClient(chat.coreUrl);
    api = new ApiClient(chat.url);
    const fixture = new SharedFixture(core);
    scenario = await fixture.scenario();
    const tag = scenario.organizationId.slice(2);
    names = { web: `team-${tag}/web`, docs: `team-${tag}/docs`, attic: `team-${tag}/attic` };
    // Core's names for the scenario's repositories and branches (optional fixture fields).
    await fixture.updateRepository(scenario.repositoryId, (r) => {
      Object.assign(r, { name: names.web });
      Object.assign(r.branches.find((b) => b.id === scenario.branchId)!, { name: 'main' });
      Object.assign(r.branches.find((b) => b.id === scenario.deletedBranchId)!, { name: 'feature/gone' });
    });
    await fixture.updateRepository(scenario.otherRepositoryId, (r) => {
      Object.assign(r, { name: names.docs });
      Object.assign(r.branches[0]!, { name: 'gh-pages' });
    });
    await fixture.updateRepository(scenario.archivedRepositoryId, (r) => Object.assign(r, { name: names.attic }));
    await installViewerApp(core, [scenario.users.writer, scenario.users.reader]);
    actors = new Actors(core, scenario);
    branchRoom = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
    for (const text of ['before the reader came', 'the last one the reader sees']) expectStatus(await api.append(branchRoom, await actors.writer(), { bodyMarkdown: text }), 201);
  });
  after(async () => {
    api?.close();
    await browser?.close();
    await chat?.stop();
    await deployment?.drop();
  });

  it('the reader picks a room from core by filtering, sees names in the header, and the unread count and divider of the room written to while away', async () => {
    const { context, page, problems } = await personAt(browser);
    try {
      await signInByClicking(page, chat.url, scenario.users.reader);
      // The list is core's: the reader's three repositories, active ones first, the archived one marked sealed.
      const repositories = await page.locator('nav.rooms li.repository > a').allTextContents();
      expect(repositories).to.deep.equal([names.docs, names.web, names.attic]);
      expect(await roomRow(page, `#/r/${scenario.archivedRepositoryId}`).locator('.room-note').textContent()).to.equal('sealed');
      // The reader lands on the first active repository, named in the header.
      expect(new URL(page.url()).hash).to.equal(docsHash());
      expect(await page.locator('#room-title').textContent()).to.equal(names.docs);

      // Typing filters repositories and branches by name: "main" leaves only web's branch main.
      await page.getByLabel('Filter rooms').fill('MAIN');
      await expect_(() => page.locator('nav.rooms a').allTextContents(), [names.web, 'main']);
      await page.locator('nav.rooms').getByRole('link', { name: 'main', exact: true }).click();
      await page.waitForURL((url) => url.hash === branchHash());
      await waitLive(page);
      expect(await page.locator('#room-title').textContent()).to.equal(`${names.web} · main`);
      await page.locator('li.message', { hasText: 'the last one the reader sees' }).waitFor();
      // Nothing was unread the first time the room opened here: no divider.
      expect(await page.locator('.new-messages').count()).to.equal(0);

      // To the docs room, found by its name; meanwhile the writer writes in the branch room.
      await page.getByLabel('Filter rooms').fill('docs');
      await expect_(() => page.locator('nav.rooms a').allTextContents(), [names.docs, 'gh-pages']);
      await page.locator('nav.rooms').getByRole('link', { name: names.docs, exact: true }).click();
      await page.waitForURL((url) => url.hash === docsHash());
      await waitLive(page);
      await page.getByLabel('Filter rooms').fill('');
      const unread: string[] = [];
      for (let i = 0; i < 3; i++) {
        const sent = await api.append(branchRoom, await actors.writer(), { bodyMarkdown: `while away ${i}` });
        expectStatus(sent, 201);
        unread.push((sent.body as { messageId: string }).messageId);
      }
      const badge = roomRow(page, branchHash()).locator('.unread');
      await badge.waitFor({ timeout: 30_000 });
      expect(await badge.textContent()).to.equal('3');
      expect(await badge.getAttribute('aria-label')).to.equal('3 unread');

      // Opening the room: the divider stands right above the first message written while away, and the count is gone.
      await page.locator(`nav.rooms a[href="${branchHash()}"]`).click();
      await waitLive(page);
      await page.locator('.new-messages').waitFor();
      const afterDivider = await page.locator('.new-messages + li.message').getAttribute('data-message-id');
      expect(afterDivider).to.equal(unread[0]);
      const beforeDivider = await page.locator('li.message:has(+ .new-messages)').textContent();
      expect(beforeDivider).to.contain('the last one the reader sees');
      expect(await badge.count()).to.equal(0);

      // The room counts from what the reader saw now: one message more while away again shows 1, not 4.
      await page.locator(`nav.rooms a[href="${docsHash()}"]`).click();
      await waitLive(page);
      expectStatus(await api.append(branchRoom, await actors.writer(), { bodyMarkdown: 'one more' }), 201);
      await badge.waitFor({ timeout: 30_000 });
      expect(await badge.textContent()).to.equal('1');
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('a branch linked by its name opens the branch room core resolves the name to', async () => {
    const { context, page, problems } = await personAt(browser);
    try {
      await signInByClicking(page, chat.url, scenario.users.reader);
      await page.goto(`${chat.url}/#/r/${scenario.repositoryId}/branch/${encodeURIComponent('feature/gone')}`);
      await page.waitForURL((url) => url.hash === `#/r/${scenario.repositoryId}/b/${scenario.deletedBranchId}`);
      expect(await page.locator('#room-title').textContent()).to.equal(`${names.web} · feature/gone`);
      await page.goto(`${chat.url}/#/r/${scenario.repositoryId}/branch/no-such-branch`);
      await page.getByRole('alert').filter({ hasText: 'no branch named “no-such-branch”' }).waitFor();
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });
});

/** Polls `read` until it gives `expected` (the list re-renders as the filter is typed). */
async function expect_<T>(read: () => Promise<T>, expected: T, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    try {
      expect(value).to.deep.equal(expected);
      return;
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
