import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { ulid } from 'ulid';
import { XSS_VECTORS } from '../../services/api/test/fixtures/xss-vectors.ts';
import { ApiClient, type RoomScope } from '../harness/api-client.ts';
import { expectStatus } from '../harness/assertions.ts';
import { startChatProcess, type ChatProcess } from '../harness/chat-process.ts';
import { DevCoreClient } from '../harness/dev-core-client.ts';
import { SharedFixture, type Scenario } from '../harness/fixture-factory.ts';
import { Actors, deploymentEnv } from '../harness/stacks.ts';
import { clickThroughSignIn, installViewerApp, launchChromium, messageIds, personAt, signInByClicking, signInTo, signOutAndBackIn, waitLive } from './viewer-world.ts';

/** Full commit IDs the scenario's repository gains at core. */
const COMMITS = ['3f2a9c1b7d4e5f60718293a4b5c6d7e8f9012345', 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678', '77e0d5c2b1a0f9e8d7c6b5a4938271605f4e3d2c'];

/**
 * The web viewer in Debian's Chromium, served by the all-in-one at its root: sign-in through core's
 * marketplace handoff, live messages across browser contexts, the XSS corpus rendered inert, and
 * commit links only where spec section 1 rule 6 and section 8 allow them.
 */
describe('viewer: the all-in-one serves it, a browser signs in and reads rooms live', function () {
  this.timeout(120_000);
  let chat: ChatProcess;
  let core: DevCoreClient;
  let api: ApiClient;
  let browser: Browser;
  let scenario: Scenario;
  let actors: Actors;
  let repositoryRoom: RoomScope;
  let deployment: Awaited<ReturnType<typeof deploymentEnv>>;
  const repositoryHash = () => `#/r/${scenario.repositoryId}`;

  before(async () => {
    // PostgreSQL and Redis: a process on them is ready in seconds, where the embedded database migrates first.
    deployment = await deploymentEnv('postgres', 'viewer');
    [chat, browser] = await Promise.all([startChatProcess({ name: 'chat[viewer]', env: { ...deployment.env, APPEND_RATE_LIMIT: '100000', GATEWAY_RECHECK_MS: '1000' } }), launchChromium()]);
    core = new DevCoreClient(chat.coreUrl);
    api = new ApiClient(chat.url);
    const fixture = new SharedFixture(core);
    scenario = await fixture.scenario();
    await fixture.updateRepository(scenario.repositoryId, (repository) => Object.assign(repository, { commits: COMMITS }));
    // The all-in-one registered its own callback at its dev-core; the test only installs the app for its people.
    await installViewerApp(core, [scenario.users.writer, scenario.users.reader]);
    actors = new Actors(core, scenario);
    repositoryRoom = { repositoryId: scenario.repositoryId };
  });
  after(async () => {
    api?.close();
    await browser?.close();
    await chat?.stop();
    await deployment?.drop();
  });

  it('serves the page, its assets and its settings with content types, cache headers and a CSP without inline script', async () => {
    const page = await fetch(`${chat.url}/`);
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).to.equal('no-store');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).to.contain("script-src 'self'").and.contain("default-src 'none'").and.contain("frame-ancestors 'none'");
    expect(csp).not.to.contain('unsafe-inline');
    expect(csp).not.to.contain('unsafe-eval');
    const html = await page.text();
    expect(html, 'no inline script').not.to.match(/<script(?![^>]*\bsrc=)[^>]*>/);
    const script = /src="(\/assets\/app-[^"]+\.js)"/.exec(html)![1]!;
    const asset = await fetch(`${chat.url}${script}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(asset.status).to.equal(200);
    expect(asset.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
    expect(asset.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
    expect(asset.headers.get('x-content-type-options')).to.equal('nosniff');
    const callback = await fetch(`${chat.url}/callback?code=x&state=y`);
    expect(callback.headers.get('cache-control')).to.equal('no-store');
    expect(callback.headers.get('referrer-policy')).to.equal('no-referrer');
    const settings = (await (await fetch(`${chat.url}/viewer-config.json`)).json()) as { coreUrl: string; redirectUri: string; clientId: string };
    expect(settings).to.include({ coreUrl: chat.coreUrl, redirectUri: `${chat.url}/callback`, clientId: 'chat-viewer' });
    expect((await fetch(`${chat.url}/assets/missing.js`)).status).to.equal(404);
    // The API is untouched by the viewer's routes.
    expectStatus(await api.getRoom(repositoryRoom, await actors.writer()), 200);
  });

  it('signs in through the handoff: PKCE and state, the callback address scrubbed, the token only in session storage', async () => {
    const { context, page, problems } = await personAt(browser);
    const urls: string[] = [];
    page.on('request', (request) => urls.push(request.url()));
    try {
      await page.goto(`${chat.url}/${repositoryHash()}`);
      await clickThroughSignIn(page, scenario.users.writer);
      await page.waitForURL((url) => url.pathname === '/' && url.hash === repositoryHash());
      await waitLive(page);
      const authorize = new URL(urls.find((u) => u.startsWith(`${chat.coreUrl}/oauth/authorize?`))!);
      expect(authorize.searchParams.get('code_challenge_method')).to.equal('S256');
      expect(authorize.searchParams.get('code_challenge')).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(authorize.searchParams.get('state')).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(authorize.searchParams.get('redirect_uri')).to.equal(`${chat.url}/callback`);
      expect(page.url(), 'no code or state left in the address').to.equal(`${chat.url}/${repositoryHash()}`);
      const stored = await page.evaluate(() => ({ session: sessionStorage.getItem('chat-viewer.session'), local: Object.entries(localStorage), cookie: document.cookie }));
      const token = (JSON.parse(stored.session!) as { accessToken: string }).accessToken;
      expect(token).to.match(/^eyJ/);
      // Local storage keeps only where the person last was in each room, never a credential.
      expect(stored.local.map(([key]) => key), 'only seen positions in local storage').to.deep.equal([`chat-viewer.seen.${scenario.users.writer}`]);
      expect(stored.local.filter(([, value]) => value.includes(token) || /eyJ/.test(value)), 'no token in local storage').to.deep.equal([]);
      expect(stored.cookie).to.equal('');
      expect(urls.filter((u) => u.includes(token)), 'the token in no URL').to.deep.equal([]);
      expect(await page.locator('.user').textContent()).to.equal(scenario.users.writer);
      // The token is chat's: it reads the room through the API.
      expectStatus(await api.getRoom(repositoryRoom, token), 200);
      // A reload keeps the session of this tab.
      await page.reload();
      await waitLive(page);
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('two people sign in by clicking on a port other than 8080, whose callback the all-in-one registered at its dev-core; sign-out leads back to sign-in', async () => {
    expect(new URL(chat.url).port).to.not.equal('8080');
    const apps = ((await core.getFixture()) as { apps: { clientId: string; redirectUri: string }[] }).apps;
    expect(apps.find((a) => a.clientId === 'chat-viewer')?.redirectUri).to.equal(`${chat.url}/callback`);
    // u_alice and u_bob of the demo fixture, with its installations, and the demo rooms of the all-in-one's viewer.
    const people = await Promise.all(['u_alice', 'u_bob'].map(async (userId) => ({ userId, ...(await personAt(browser)) })));
    try {
      await Promise.all(people.map(({ page, userId }) => signInByClicking(page, chat.url, userId)));
      for (const { page, problems } of people) {
        expect(page.url()).to.equal(`${chat.url}/#/r/01JGFJJZ00QNYBVPQTAT49MN0F`);
        expect(await page.locator('nav.rooms a[aria-current="page"]').textContent()).to.equal('acme/web');
        expect(problems).to.deep.equal([]);
      }
      await signOutAndBackIn(people[1]!.page, 'u_bob');
      expect(people[1]!.problems).to.deep.equal([]);
    } finally {
      for (const { context } of people) await context.close();
    }
  });

  it('a message sent in one browser context appears live in another, announced to screen readers; a send is stored once', async () => {
    const writer = await personAt(browser);
    const reader = await personAt(browser);
    try {
      await Promise.all([signInTo(writer.page, chat.url, repositoryHash(), scenario.users.writer), signInTo(reader.page, chat.url, repositoryHash(), scenario.users.reader)]);
      const text = `hello **live** ${ulid()}`;
      await writer.page.getByLabel('Message (Markdown)').fill(text);
      await writer.page.keyboard.press('Enter');
      const body = text.replace('**live**', 'live');
      await reader.page.locator('li.message', { hasText: body }).waitFor({ timeout: 15_000 });
      await reader.page.locator('[aria-live="polite"][aria-atomic="true"]', { hasText: `New message from ${scenario.users.writer}` }).waitFor();
      expect(await reader.page.locator('li.message strong', { hasText: 'live' }).count(), 'rendered Markdown').to.be.at.least(1);
      await writer.page.locator('li.message', { hasText: body }).waitFor();
      expect(await writer.page.locator('li.message', { hasText: body }).count(), 'own message shown once').to.equal(1);
      const listed = await api.list<{ items: { bodyMarkdown: string }[] }>(repositoryRoom, await actors.reader(), 'limit=200');
      expect(listed.body.items.filter((m) => m.bodyMarkdown === text)).to.have.length(1);
      // A reader may not write: the refusal is shown in words.
      await reader.page.getByLabel('Message (Markdown)').fill('may I?');
      await reader.page.keyboard.press('Enter');
      await reader.page.getByRole('alert').filter({ hasText: 'You do not have permission' }).waitFor();
      expect([...writer.problems, ...reader.problems]).to.deep.equal([]);
    } finally {
      await writer.context.close();
      await reader.context.close();
    }
  });

  it('@ opens a keyboard picker of the room readers from core; the picked mention goes out with its exact byte span, and its person sees it live, marked as theirs, with the inbox count up', async () => {
    const demoRoom = { repositoryId: '01JGFJJZ00QNYBVPQTAT49MN0F' };
    const alice = await personAt(browser);
    const bob = await personAt(browser);
    try {
      // u_alice and u_bob of the demo fixture, in the demo repository's room, whose readers core lists.
      const demoHash = `#/r/${demoRoom.repositoryId}`;
      await Promise.all([signInTo(alice.page, chat.url, demoHash, 'u_alice'), signInTo(bob.page, chat.url, demoHash, 'u_bob')]);
      const bobToken = await core.mintToken({ type: 'human', subjectId: 'u_bob' });
      const inbox = await api.send<{ items: { acknowledged: boolean }[] }>({ method: 'GET', path: `/v1/repositories/${demoRoom.repositoryId}/inbox?limit=200`, headers: { authorization: `Bearer ${bobToken}` } });
      const unreadBefore = inbox.body.items.filter((n) => !n.acknowledged).length;
      const count = bob.page.locator('.inbox-toggle .count');
      await count.filter({ hasText: new RegExp(`^${unreadBefore}$`) }).waitFor();

      const box = alice.page.getByLabel('Message (Markdown)');
      await box.click();
      await alice.page.keyboard.type('👋 @');
      const options = alice.page.getByRole('listbox').getByRole('option');
      await options.first().waitFor();
      const ids = () => options.evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.principalId));
      expect(await ids(), 'members and room:read bots, from core').to.deep.equal(['u_alice', 'u_bob', 'b_ci', 'b_reader']);
      await alice.page.keyboard.type('u_b');
      await options.filter({ hasText: 'u_alice' }).waitFor({ state: 'detached' });
      expect(await ids(), 'filtered as typed').to.deep.equal(['u_bob']);
      await alice.page.keyboard.press('ArrowDown');
      await alice.page.keyboard.press('ArrowUp');
      expect(await options.first().getAttribute('aria-selected')).to.equal('true');
      await alice.page.keyboard.press('Enter');
      await alice.page.getByRole('listbox').waitFor({ state: 'detached' });
      expect(await box.inputValue(), 'the pick replaced the typed @u_b').to.equal('👋 @u_bob ');
      await alice.page.keyboard.type('please review');
      await alice.page.keyboard.press('Enter');

      const body = '👋 @u_bob please review';
      const received = bob.page.locator('li.message.mentions-self', { hasText: 'please review' });
      await received.waitFor({ timeout: 15_000 });
      const mark = received.locator('.mention.mention-self');
      expect(await mark.textContent()).to.equal('@u_bob');
      expect(await mark.getAttribute('title')).to.equal('Mentions you');
      await count.filter({ hasText: new RegExp(`^${unreadBefore + 1}$`) }).waitFor({ timeout: 15_000 });
      // The sender sees the mention marked too, but not as hers.
      const sent = alice.page.locator('li.message', { hasText: 'please review' });
      await sent.locator('.mention').waitFor();
      expect(await sent.locator('.mention-self').count()).to.equal(0);

      const aliceToken = await core.mintToken({ type: 'human', subjectId: 'u_alice' });
      const listed = await api.list<{ items: { bodyMarkdown: string; mentions?: { principalKind: string; principalId: string; startByte: number; endByte: number }[] }[] }>(demoRoom, aliceToken, 'limit=200');
      const stored = listed.body.items.filter((m) => m.bodyMarkdown === body);
      expect(stored).to.have.length(1);
      expect(stored[0]!.mentions).to.deep.equal([{ principalKind: 'human', principalId: 'u_bob', startByte: 5, endByte: 11 }]);
      const span = stored[0]!.mentions![0]!;
      expect(Buffer.from(body, 'utf8').subarray(span.startByte, span.endByte).toString('utf8')).to.equal('@u_bob');
      expect([...alice.problems, ...bob.problems]).to.deep.equal([]);
    } finally {
      await alice.context.close();
      await bob.context.close();
    }
  });

  it('renders every body of the XSS corpus inert (no dialog, no script, no request), and an untrusted render policy as text', async () => {
    const room: RoomScope = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
    const writerToken = await actors.writer();
    for (const vector of XSS_VECTORS) expectStatus(await api.append(room, writerToken, { bodyMarkdown: vector }), 201);
    const { context, page, problems } = await personAt(browser);
    const foreign: string[] = [];
    page.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(`${chat.url}/`) && !url.startsWith(`${chat.coreUrl}/`) && !url.startsWith('data:')) foreign.push(url);
    });
    // One history answer is rewritten to carry a policy the viewer must not trust.
    await page.route('**/branches/*/room/history?*', async (route) => {
      const response = await route.fetch();
      const page = (await response.json()) as { items: { renderPolicy: string; renderedHtml: string; bodyMarkdown: string }[] };
      const first = page.items[0];
      if (first) Object.assign(first, { renderPolicy: 'raw_html', renderedHtml: '<img src=x onerror="alert(1)">', bodyMarkdown: '<b>untrusted</b> <img src=x onerror="alert(2)">' });
      await route.fulfill({ response, json: page });
    });
    try {
      await signInTo(page, chat.url, `#/r/${scenario.repositoryId}/b/${scenario.branchId}`, scenario.users.reader);
      // Older pages are read as the view nears its top, and by the button: it may be gone by the time a press lands.
      while ((await page.locator('.load-older').count()) > 0) await page.locator('.load-older').click({ timeout: 5_000 }).catch(() => undefined);
      expect(await page.locator('li.message').count()).to.equal(XSS_VECTORS.length);
      // Every message scrolled through, so lazy content would have loaded.
      for (const item of await page.locator('li.message').all()) await item.scrollIntoViewIfNeeded();
      await page.waitForTimeout(500);
      const dangerous = await page.evaluate(() => {
        const list = document.querySelector('.messages')!;
        const found: string[] = [];
        for (const element of list.querySelectorAll('*')) {
          if (/^(script|iframe|object|embed|frame|base|form|meta|link|style)$/i.test(element.tagName)) found.push(element.tagName);
          for (const attribute of element.attributes) {
            if (/^on/i.test(attribute.name)) found.push(`${element.tagName} ${attribute.name}`);
            if (/^\s*(javascript|vbscript|data):/i.test(attribute.value) && attribute.name !== 'alt') found.push(`${element.tagName} ${attribute.name}=${attribute.value}`);
          }
        }
        return found;
      });
      expect(dangerous).to.deep.equal([]);
      const untrusted = page.locator('li.message .body.plain').first();
      expect(await untrusted.textContent()).to.equal('<b>untrusted</b> <img src=x onerror="alert(2)">');
      expect(await untrusted.locator('img, b').count()).to.equal(0);
      expect(problems, 'no dialog and no page error').to.deep.equal([]);
      expect(foreign, 'no request to any other origin').to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('links 7–40 hex candidates in prose to known commits only: not in code, pre or links, not unknown ones, at most 100 values a look-up', async () => {
    const room = repositoryRoom;
    const [a, b, c] = COMMITS as [string, string, string];
    const unknown = 'deadbeefcafe1234';
    const body = [
      `Fixed in ${a.slice(0, 7)} and ${b.toUpperCase()}; ${unknown} is no commit, nor is ${a.slice(0, 6)} (too short) or x${c.slice(0, 9)}.`,
      '',
      `Inline \`${c.slice(0, 10)}\` stays code, and so does [${c.slice(0, 8)}](https://example.com/${c}).`,
      '',
      '```',
      c,
      '```',
    ].join('\n');
    expectStatus(await api.append(room, await actors.writer(), { bodyMarkdown: body }), 201);
    const many = Array.from({ length: 150 }, (_, i) => (0x1000000000n + BigInt(i) * 7919n).toString(16)).join(' ');
    expectStatus(await api.append(room, await actors.writer(), { bodyMarkdown: `many: ${many} and ${c.slice(0, 12)}` }), 201);
    const { context, page, problems } = await personAt(browser);
    const lookups: string[][] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/commits/lookup')) lookups.push((JSON.parse(request.postData() ?? '{}') as { candidates: string[] }).candidates);
    });
    try {
      await signInTo(page, chat.url, repositoryHash(), scenario.users.reader);
      const links = page.locator('a.commit-link');
      await links.nth(2).waitFor({ timeout: 10_000 });
      await page.waitForTimeout(300);
      const found = await links.evaluateAll((all) => all.map((l) => ({ text: l.textContent, href: l.getAttribute('href'), inCode: !!l.parentElement?.closest('code, pre') })));
      const commitHref = (sha: string) => `${chat.coreUrl}/repositories/${scenario.repositoryId}/commits/${sha}`;
      expect(found).to.deep.equal([
        { text: a.slice(0, 7), href: commitHref(a), inCode: false },
        { text: b.toUpperCase(), href: commitHref(b), inCode: false },
        { text: c.slice(0, 12), href: commitHref(c), inCode: false },
      ]);
      expect(lookups.length).to.be.at.least(2);
      for (const values of lookups) {
        expect(values.length).to.be.at.most(100);
        expect(new Set(values).size).to.equal(values.length);
      }
      const asked = lookups.flat();
      expect(asked).to.include(unknown);
      expect(asked, 'code, pre and link text are never asked about').not.to.include.members([c.slice(0, 10), c.slice(0, 8), c]);
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('a refused token leads back through sign-in to the same room and scroll position', async () => {
    const room = { repositoryId: scenario.repositoryId, branchId: scenario.branchId } as RoomScope;
    const writerToken = await actors.writer();
    for (let i = 0; i < 60; i += 1) expectStatus(await api.append(room, writerToken, { bodyMarkdown: `scroll filler ${i}\n\nsecond paragraph of ${i}` }), 201);
    const hash = `#/r/${scenario.repositoryId}/b/${scenario.branchId}`;
    const { context, page, problems } = await personAt(browser);
    /** The first message whose bottom is below the list's top, and how far its top is from it. */
    const anchor = () =>
      page.locator('.timeline').evaluate((view) => {
        const top = view.getBoundingClientRect().top;
        const item = [...view.querySelectorAll<HTMLElement>('li.message')].find((li) => li.getBoundingClientRect().bottom > top)!;
        return { id: item.dataset.messageId!, offset: Math.round(item.getBoundingClientRect().top - top) };
      });
    try {
      await signInTo(page, chat.url, hash, scenario.users.writer);
      await page.locator('li.message', { hasText: 'scroll filler 59' }).waitFor();
      // Into the middle of the history, between two messages' edges.
      await page.locator('.timeline').evaluate((view) => view.scrollTo({ top: Math.round(view.scrollHeight / 2) - 37 }));
      await page.waitForTimeout(300);
      const before = await anchor();
      const messageIdsBefore = await messageIds(page);
      expect(messageIdsBefore.indexOf(before.id), 'anchored in the middle').to.be.within(5, messageIdsBefore.length - 10);
      const session = await page.evaluate(() => sessionStorage.getItem('chat-viewer.session'));
      const token = (JSON.parse(session!) as { accessToken: string }).accessToken;
      const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { jti: string };
      await core.revoke({ jti: claims.jti });
      // The gateway's recheck sends `reauthorize`; the reconnect with the same token is refused.
      const signIn = page.getByRole('button', { name: 'Sign in with core' });
      await signIn.waitFor({ timeout: 30_000 });
      expect(await page.locator('body').textContent()).to.contain('Sign in again to continue where you were.');
      expect(await page.evaluate(() => sessionStorage.getItem('chat-viewer.session')), 'the refused session is dropped').to.equal(null);
      await clickThroughSignIn(page, scenario.users.writer);
      await page.waitForURL((url) => url.pathname === '/' && url.hash === hash);
      await waitLive(page);
      await page.locator(`li.message[data-message-id="${before.id}"]`).waitFor();
      await page.waitForTimeout(300);
      const after = await anchor();
      expect(after.id, 'the same message at the top').to.equal(before.id);
      expect(Math.abs(after.offset - before.offset), `offset ${after.offset} vs ${before.offset}`).to.be.at.most(2);
      const fresh = (JSON.parse((await page.evaluate(() => sessionStorage.getItem('chat-viewer.session')))!) as { accessToken: string }).accessToken;
      expect(fresh, 'a new token').not.to.equal(token);
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('a send that chat answers 401 (a token it no longer takes) leads back to sign-in, and through it to the room', async () => {
    const { context, page, problems } = await personAt(browser);
    try {
      await signInTo(page, chat.url, repositoryHash(), scenario.users.writer);
      // Only the sends carry a token chat refuses; the room's stream keeps its own, so the composer alone meets the 401.
      await page.route(`${chat.url}/v1/repositories/*/room/messages`, (route) =>
        route.request().method() === 'POST' ? route.continue({ headers: { ...route.request().headers(), authorization: 'Bearer not-a-token-chat-takes' } }) : route.continue(),
      );
      await page.getByLabel('Message (Markdown)').fill('after my token went bad');
      await page.keyboard.press('Enter');
      await page.getByRole('button', { name: 'Sign in with core' }).waitFor({ timeout: 15_000 });
      expect(await page.getByRole('alert').textContent()).to.contain('Sign in again');
      expect(await page.evaluate(() => sessionStorage.getItem('chat-viewer.session')), 'the refused session is dropped').to.equal(null);
      await page.unrouteAll();
      await clickThroughSignIn(page, scenario.users.writer);
      await page.waitForURL((url) => url.hash === repositoryHash());
      await waitLive(page);
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('is usable at 360 px wide: no horizontal scrolling, the composer and the inbox reachable', async () => {
    const { context, page } = await personAt(browser);
    try {
      await page.setViewportSize({ width: 360, height: 740 });
      await signInTo(page, chat.url, repositoryHash(), scenario.users.writer);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).to.be.at.most(360);
      await page.getByLabel('Message (Markdown)').focus();
      await page.getByRole('button', { name: /Inbox/ }).click();
      await page.getByRole('heading', { name: /Inbox/ }).waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).to.be.at.most(360);
      const current = await messageIds(page);
      expect(current.length).to.be.at.least(1);
    } finally {
      await context.close();
    }
  });
});
