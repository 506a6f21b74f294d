import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { ApiClient, type RoomScope } from '../harness/api-client.ts';
import { expectStatus } from '../harness/assertions.ts';
import { startChatProcess, type ChatProcess } from '../harness/chat-process.ts';
import { DevCoreClient } from '../harness/dev-core-client.ts';
import { SharedFixture, type Scenario } from '../harness/fixture-factory.ts';
import { Actors, deploymentEnv } from '../harness/stacks.ts';
import { clickThroughSignIn, installViewerApp, launchChromium, messageIds, personAt, signInTo, waitLive } from './viewer-world.ts';

const MESSAGES = 2_500;

/** The text of the first and last message in the timeline's view, and how many messages are rendered. */
function view(page: Page) {
  return page.locator('.timeline').evaluate((timeline) => {
    const frame = timeline.getBoundingClientRect();
    const visible = [...timeline.querySelectorAll<HTMLElement>('li.message')].filter((li) => {
      const box = li.getBoundingClientRect();
      return box.bottom > frame.top && box.top < frame.bottom;
    });
    // No named function in here: the test runner's transform would wrap it in a helper the page lacks.
    const [first, last] = [visible[0], visible.at(-1)].map((li) => li?.querySelector('.body')?.textContent?.trim());
    return { rendered: timeline.querySelectorAll('li.message').length, first, last };
  });
}

/**
 * The viewer in a room of thousands of messages: it opens at the newest through the history read
 * (one page, never the whole history), reads older pages as the person scrolls up without moving
 * what they look at, and a message's permalink, opened in a fresh browser, lands on it after sign-in.
 */
describe('viewer: a big room opens at its newest message, older history on scroll, permalinks', function () {
  this.timeout(240_000);
  let chat: ChatProcess;
  let browser: Browser;
  let api: ApiClient;
  let scenario: Scenario;
  let actors: Actors;
  let room: RoomScope;
  let deployment: Awaited<ReturnType<typeof deploymentEnv>>;
  const hash = () => `#/r/${scenario.repositoryId}/b/${scenario.branchId}`;

  before(async () => {
    deployment = await deploymentEnv('postgres', 'viewer_history');
    [chat, browser] = await Promise.all([startChatProcess({ name: 'chat[viewer-history]', env: { ...deployment.env, APPEND_RATE_LIMIT: '1000000' } }), launchChromium()]);
    const core = new DevCoreClient(chat.coreUrl);
    api = new ApiClient(chat.url);
    const fixture = new SharedFixture(core);
    scenario = await fixture.scenario();
    await installViewerApp(core, [scenario.users.writer, scenario.users.reader]);
    actors = new Actors(core, scenario);
    room = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
    const token = await actors.writer();
    // One writer, in order, 25 at a time: message i is the i-th of the room.
    for (let i = 0; i < MESSAGES; i += 25) {
      const batch = Array.from({ length: 25 }, (_, k) => i + k);
      for (const k of batch) expectStatus(await api.append(room, token, { bodyMarkdown: `history ${k}` }), 201);
    }
  });
  after(async () => {
    api?.close();
    await browser?.close();
    await chat?.stop();
    await deployment?.drop();
  });

  it('opens at the newest message with one page read, and scrolling up reads older pages in place, down to the first message', async () => {
    const { context, page, problems } = await personAt(browser);
    const reads: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (/\/room\/(messages|history|events)$/.test(url.pathname) && request.method() === 'GET') reads.push(`${url.pathname.split('/').pop()}${url.search}`);
    });
    try {
      await signInTo(page, chat.url, hash(), scenario.users.reader);
      await page.locator('li.message', { hasText: `history ${MESSAGES - 1}` }).waitFor();
      const opened = await view(page);
      expect(opened.last, 'the newest message at the bottom of the view').to.equal(`history ${MESSAGES - 1}`);
      expect(opened.rendered).to.equal(100);
      expect(reads.filter((r) => r.startsWith('messages')), 'no forward walk through the history').to.deep.equal([]);
      expect(reads.filter((r) => r.startsWith('history'))).to.deep.equal(['history?limit=100']);

      // Scrolled to the top: the next page is read and what was at the top stays where it was.
      const before = await page.locator('.timeline').evaluate((timeline) => {
        timeline.scrollTop = 0;
        const first = timeline.querySelector<HTMLElement>('li.message')!;
        (window as unknown as { firstShown: Element }).firstShown = first;
        return { id: first.dataset.messageId!, top: first.getBoundingClientRect().top };
      });
      await page.waitForFunction(() => document.querySelectorAll('li.message').length === 200);
      await page.waitForTimeout(100);
      const kept = await page.locator(`li.message[data-message-id="${before.id}"]`).evaluate((li) => li.getBoundingClientRect().top);
      expect(Math.abs(kept - before.top), 'the message at the top stays in place').to.be.at.most(2);
      const sameElement = await page.evaluate((id) => document.querySelector(`li.message[data-message-id="${id}"]`) === (window as unknown as { firstShown: Element }).firstShown, before.id);
      expect(sameElement, 'the messages shown are kept as they are, not rendered again').to.equal(true);
      expect((await page.locator(`li.message[data-message-id="${before.id}"] .body`).textContent())?.trim()).to.equal(`history ${MESSAGES - 100}`);
      expect((await page.locator('li.message .body').first().textContent())?.trim()).to.equal(`history ${MESSAGES - 200}`);
      expect(reads.filter((r) => r.startsWith('history')).length).to.equal(2);
      expect(reads.at(-1)).to.match(/^history\?before=[A-Za-z0-9_-]{36}&limit=100$/);

      // On up to the first message, by the mouse wheel.
      await page.locator('.timeline').hover();
      for (let turns = 0; turns < 100 && (await page.locator('li.message', { hasText: /^history 0$/ }).count()) === 0; turns++) {
        await page.mouse.wheel(0, -4000);
        await page.waitForTimeout(50);
      }
      const ids = await messageIds(page);
      expect(ids).to.have.length(MESSAGES);
      const listed: string[] = [];
      for (let cursor: string | null = null; listed.length === 0 || cursor; ) {
        const res: { body: { items: { messageId: string }[]; nextCursor?: string | null } } = await api.list(room, await actors.reader(), `limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        listed.push(...res.body.items.map((m) => m.messageId));
        cursor = res.body.nextCursor ?? null;
      }
      expect(ids, 'every message once, in the room\'s order').to.deep.equal(listed);
      expect(await page.locator('.load-older').count(), 'nothing older to read').to.equal(0);
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('a new message arrives live after the newest page, once: the stream resumes from that page\'s last cursor', async () => {
    const { context, page, problems } = await personAt(browser);
    const streams: Array<string | undefined> = [];
    page.on('request', (request) => {
      if (request.url().includes('/room/events')) streams.push(request.headers()['last-event-id']);
    });
    try {
      await signInTo(page, chat.url, hash(), scenario.users.reader);
      const newest = await page.locator('li.message').last().getAttribute('data-message-id');
      const link = await page.locator('li.message').last().locator('a.permalink').getAttribute('href');
      // The stream starts at the newest message read: its cursor is the one in that message's permalink.
      expect(streams[0]).to.be.a('string');
      expect(link).to.equal(`${chat.url}/${hash()}/m/${newest}/${streams[0]}`);
      const sent = await api.append<{ messageId: string }>(room, await actors.writer(), { bodyMarkdown: 'after the newest page' });
      await page.locator('li.message', { hasText: 'after the newest page' }).waitFor();
      await page.waitForTimeout(300);
      const ids = await messageIds(page);
      expect(ids.slice(-2)).to.deep.equal([newest, sent.body.messageId]);
      expect(new Set(ids).size).to.equal(ids.length);
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('every message has a link that copies its permalink; opened in a fresh browser, it lands on the oldest message, highlighted, after sign-in; the room itself then opens at its newest', async () => {
    const first = await personAt(browser);
    let permalink = '';
    try {
      await first.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: chat.url });
      await signInTo(first.page, chat.url, hash(), scenario.users.reader);
      // A message of the newest page: its "link" action copies its permalink.
      const message = first.page.locator('li.message', { hasText: `history ${MESSAGES - 3}` });
      await message.hover();
      await message.getByRole('link', { name: 'link' }).click();
      await first.page.locator('[aria-live="polite"]', { hasText: 'Link to the message copied' }).waitFor();
      const copied = await first.page.evaluate(() => navigator.clipboard.readText());
      const id = await message.getAttribute('data-message-id');
      expect(copied).to.match(new RegExp(`^${chat.url}/#/r/${scenario.repositoryId}/b/${scenario.branchId}/m/${id}/[A-Za-z0-9_-]{36}$`));
      permalink = copied;
    } finally {
      await first.context.close();
    }

    // The permalink of the room's first message, as a person would paste it into a fresh browser.
    const { context, page, problems } = await personAt(browser);
    const reads: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (/\/room\/(messages|history)$/.test(url.pathname)) reads.push(url.search);
    });
    try {
      // The first message and its cursor: a one-item page of the list ends at it.
      const firstPage = (await api.list<{ items: { messageId: string; bodyMarkdown: string }[]; nextCursor: string }>(room, await actors.reader(), 'limit=1')).body;
      const oldest = firstPage.items[0]!;
      expect(oldest.bodyMarkdown).to.equal('history 0');
      // The permalink's form is the one the link action copied.
      const target = permalink.replace(/\/m\/.*$/, `/m/${oldest.messageId}/${firstPage.nextCursor}`);
      await page.goto(target);
      await clickThroughSignIn(page, scenario.users.reader);
      await page.waitForURL((url) => url.href === target);
      const highlighted = page.locator('li.message.highlighted');
      await highlighted.waitFor();
      expect(await highlighted.getAttribute('data-message-id')).to.equal(oldest.messageId);
      const box = await highlighted.boundingBox();
      const frame = (await page.locator('.timeline').boundingBox())!;
      expect(box!.y + box!.height > frame.y && box!.y < frame.y + frame.height, 'the message is in view').to.equal(true);
      // Read around the position directly: no walk from the newest message back.
      expect(reads.length).to.be.at.most(3);
      expect(reads.some((r) => /[?&]at=/.test(r))).to.equal(true);
      expect((await view(page)).rendered).to.be.at.most(100);

      // Leaving the permalink for the room itself opens it at its newest message, live again.
      const newest = (await api.send<{ items: { bodyMarkdown: string }[] }>({ method: 'GET', path: `/v1/repositories/${scenario.repositoryId}/branches/${scenario.branchId}/room/history?limit=1`, headers: { authorization: `Bearer ${await actors.reader()}` } })).body.items[0]!;
      await page.locator(`nav.rooms a[href="${hash()}"]`).click();
      await waitLive(page);
      await page.locator('li.message', { hasText: newest.bodyMarkdown }).waitFor();
      await page.waitForTimeout(300);
      expect((await view(page)).last).to.equal(newest.bodyMarkdown);
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });
});
