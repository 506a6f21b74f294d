import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { ulid } from 'ulid';
import { ApiClient, type RoomScope } from '../harness/api-client.ts';
import { expectStatus } from '../harness/assertions.ts';
import { startChatProcess, type ChatProcess } from '../harness/chat-process.ts';
import { DevCoreClient } from '../harness/dev-core-client.ts';
import { SharedFixture, type Scenario } from '../harness/fixture-factory.ts';
import { OpenApiValidator } from '../harness/openapi-validator.ts';
import { Actors, deploymentEnv } from '../harness/stacks.ts';
import { installViewerApp, launchChromium, messageIds, personAt, signInTo } from './viewer-world.ts';

/** Messages appended after the one searched for, so it is far from the room's newest page. */
const AFTER_TARGET = 300;
/** Messages that share one word, more than the viewer's page of results (20). */
const NOTES = 23;

const validator = new OpenApiValidator();

/**
 * Records the search and history reads the page makes, and checks each answer against the
 * OpenAPI document as every test does with the answers it sees.
 */
function watchReads(page: Page): { reads: string[]; violations: string[] } {
  const watched = { reads: [] as string[], violations: [] as string[] };
  page.on('response', async (response) => {
    const url = new URL(response.url());
    if (!/\/(search|room\/history)$/.test(url.pathname)) return;
    watched.reads.push(url.pathname + url.search);
    const body = await response.text().catch(() => undefined);
    if (body === undefined) return;
    const observed = { method: response.request().method(), path: url.pathname + url.search, status: response.status(), headers: response.headers(), body };
    for (const problem of validator.problems(observed)) watched.violations.push(`${observed.path} → ${observed.status}: ${problem}`);
  });
  return watched;
}

const isSearch = (read: string) => /\/search\?/.test(read);
const isHistory = (read: string) => /\/room\/history\?/.test(read);

/** Types `query` into the search box as a person does, presses Enter, and waits for what the panel shows. */
async function searchFor(page: Page, query: string): Promise<void> {
  const box = page.getByRole('searchbox', { name: 'Search messages' });
  await box.click();
  await box.press('Control+A');
  await box.press('Delete');
  await box.pressSequentially(query);
  const answered = page.waitForResponse((response) => new URL(response.url()).pathname.endsWith('/search'));
  await box.press('Enter');
  await answered;
  await page.locator('.search-panel').locator('.search-result, .empty, .error').first().waitFor();
}

/**
 * The viewer's search box: a query searches the repository (or only the open room), results show
 * their room, sender, time and the matched text marked, a page at a time, and a click opens the
 * room at the message, marked, however far back in a long room it is.
 */
describe('viewer: searching a repository and opening a result', function () {
  this.timeout(240_000);
  let chat: ChatProcess;
  let browser: Browser;
  let api: ApiClient;
  let scenario: Scenario;
  let actors: Actors;
  let deployment: Awaited<ReturnType<typeof deploymentEnv>>;
  let names: { web: string };
  let marker: string;
  let noteWord: string;
  let target: { messageId: string };
  const notes: string[] = [];
  const repositoryHash = () => `#/r/${scenario.repositoryId}`;

  before(async () => {
    deployment = await deploymentEnv('postgres', 'viewer_search');
    [chat, browser] = await Promise.all([startChatProcess({ name: 'chat[viewer-search]', env: { ...deployment.env, APPEND_RATE_LIMIT: '1000000' } }), launchChromium()]);
    const core = new DevCoreClient(chat.coreUrl);
    api = new ApiClient(chat.url);
    const fixture = new SharedFixture(core);
    scenario = await fixture.scenario();
    names = { web: `team-${scenario.organizationId.slice(2)}/web` };
    await fixture.updateRepository(scenario.repositoryId, (r) => {
      Object.assign(r, { name: names.web });
      Object.assign(r.branches.find((b) => b.id === scenario.branchId)!, { name: 'main' });
    });
    await installViewerApp(core, [scenario.users.writer, scenario.users.reader]);
    actors = new Actors(core, scenario);
    const writer = await actors.writer();
    const repositoryRoom: RoomScope = { repositoryId: scenario.repositoryId };
    const branchRoom: RoomScope = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
    marker = `marker_${ulid().toLowerCase()}`;
    noteWord = `release_${ulid().toLowerCase()}`;

    const found = await api.append<{ messageId: string }>(branchRoom, writer, { bodyMarkdown: `found it: \`parse_config\` breaks ${marker} on <img src=x onerror=alert(1)> arm64` });
    expectStatus(found, 201);
    target = found.body;
    for (let i = 0; i < AFTER_TARGET; i++) expectStatus(await api.append(branchRoom, writer, { bodyMarkdown: `filler ${i}` }), 201);
    for (let i = 0; i < NOTES; i++) {
      const note = await api.append<{ messageId: string }>(repositoryRoom, writer, { bodyMarkdown: `note ${i} on ${noteWord}` });
      expectStatus(note, 201);
      notes.push(note.body.messageId);
    }
  });
  after(async () => {
    api?.close();
    await browser?.close();
    await chat?.stop();
    await deployment?.drop();
  });

  it('a query finds a message far back in a branch room, its match marked as text; a click opens that room at it, marked and in view', async () => {
    const { context, page, problems } = await personAt(browser);
    const watched = watchReads(page);
    try {
      await signInTo(page, chat.url, repositoryHash(), scenario.users.reader);
      await searchFor(page, `${marker} parse_config`);

      const result = page.locator('.search-result');
      expect(await result.count()).to.equal(1);
      expect(await result.getAttribute('data-message-id')).to.equal(target.messageId);
      expect(await result.locator('mark').allTextContents()).to.deep.equal(['parse_config', marker]);
      expect(await result.locator('.sender').textContent()).to.equal(scenario.users.writer);
      expect(await result.locator('.search-room').textContent()).to.equal(`${names.web} · main`);
      expect(await result.locator('time').getAttribute('datetime')).to.match(/^\d{4}-\d\d-\d\dT/);
      // The body's markup is text in the fragment, never an element.
      expect(await result.locator('.search-fragment').textContent()).to.contain('<img src=x onerror=alert(1)>');
      expect(await page.locator('.search-panel img').count()).to.equal(0);
      expect(watched.reads.filter(isSearch)).to.deep.equal([`/v1/repositories/${scenario.repositoryId}/search?q=${marker}+parse_config&limit=20`]);

      // Opening it: the branch room, read around the result's cursor, with the message marked.
      const historyBefore = watched.reads.filter(isHistory).length;
      await result.getByRole('link').click();
      await page.waitForURL((url) => url.hash.startsWith(`#/r/${scenario.repositoryId}/b/${scenario.branchId}/m/${target.messageId}/`));
      const marked = page.locator('li.message.highlighted');
      await marked.waitFor();
      expect(await marked.getAttribute('data-message-id')).to.equal(target.messageId);
      expect(await page.locator('#room-title').textContent()).to.equal(`${names.web} · main`);
      const box = (await marked.boundingBox())!;
      const frame = (await page.locator('.timeline').boundingBox())!;
      expect(box.y + box.height > frame.y && box.y < frame.y + frame.height, 'the message is in view').to.equal(true);
      const reads = watched.reads.filter(isHistory).slice(historyBefore);
      expect(reads.some((r) => /[?&]at=[A-Za-z0-9_-]{36}(&|$)/.test(r)), reads.join('\n')).to.equal(true);
      // Far back: the room's newest messages are not what was read.
      const shown = await messageIds(page);
      expect(shown).to.include(target.messageId);
      expect(await page.locator('li.message', { hasText: `filler ${AFTER_TARGET - 1}` }).count()).to.equal(0);
      // The results stay open beside the room.
      expect(await page.locator('.search-result').count()).to.equal(1);
      expect(watched.violations).to.deep.equal([]);
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('"This room only" searches the open room; no match says so; a query the service cannot read shows why in the error style', async () => {
    const { context, page, problems } = await personAt(browser);
    const watched = watchReads(page);
    try {
      await signInTo(page, chat.url, repositoryHash(), scenario.users.reader);
      await page.getByLabel('This room only').check();
      await searchFor(page, marker);
      await page.locator('.search-panel .empty').waitFor();
      expect(await page.locator('.search-panel .empty').textContent()).to.equal(`No messages match “${marker}”.`);
      expect(await page.locator('#search-title').textContent()).to.equal(`Results for “${marker}” in this room`);
      expect(watched.reads.filter(isSearch)).to.deep.equal([`/v1/repositories/${scenario.repositoryId}/room/search?q=${marker}&limit=20`]);

      // The whole repository again: the branch room's message.
      await page.getByLabel('This room only').uncheck();
      await searchFor(page, marker);
      expect(await page.locator('.search-result').getAttribute('data-message-id')).to.equal(target.messageId);

      await searchFor(page, `${marker}_nowhere`);
      await page.locator('.search-panel .empty').waitFor();
      expect(await page.locator('.search-result').count()).to.equal(0);

      await searchFor(page, `"${marker}`);
      const alert = page.locator('.search-panel .error[role="alert"]');
      await alert.waitFor();
      expect(await alert.textContent()).to.contain('The search could not be read: check its quotes and filters');
      expect(await alert.locator('.error-detail').textContent()).to.match(/^REQUEST_INVALID · request \S+$/);

      await page.getByRole('button', { name: 'Close the search results' }).click();
      expect(await page.locator('.search-panel').count()).to.equal(0);
      expect(watched.violations).to.deep.equal([]);
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('"More results" reads the next page below the first, each result once, until none is left', async () => {
    const { context, page, problems } = await personAt(browser);
    const watched = watchReads(page);
    try {
      await signInTo(page, chat.url, repositoryHash(), scenario.users.reader);
      await searchFor(page, noteWord);
      const results = page.locator('.search-result');
      expect(await results.count()).to.equal(20);
      const more = page.getByRole('button', { name: 'More results' });
      await more.click();
      await page.waitForFunction((count) => document.querySelectorAll('.search-result').length === count, NOTES);
      await more.waitFor({ state: 'detached' });
      const ids = await results.evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.messageId ?? ''));
      expect(new Set(ids).size).to.equal(NOTES);
      expect([...ids].sort()).to.deep.equal([...notes].sort());
      const searches = watched.reads.filter(isSearch);
      expect(searches).to.have.length(2);
      expect(searches[1]).to.match(/[?&]cursor=/);
      expect(watched.violations).to.deep.equal([]);
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });
});
