import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import type { RoomScope } from '../harness/api-client.ts';
import { expectStatus } from '../harness/assertions.ts';
import { startGatewayCluster, type GatewayCluster } from '../harness/gateway-cluster.ts';
import type { Scenario } from '../harness/fixture-factory.ts';
import type { Actors } from '../harness/stacks.ts';
import { installViewerApp, launchChromium, messageIds, personAt, signInByClicking, signInTo, signOutAndBackIn, updateFixture, ViewerEdge } from './viewer-world.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The demo fixture's repository, where `u_alice` writes and `u_bob` reads. */
const DEMO_REPOSITORY = '01JGFJJZ00QNYBVPQTAT49MN0F';

/**
 * The viewer in the distributed deployment: its static bundle at the edge, streams through a
 * stand-alone gateway that is SIGKILLed mid-stream, and core taking a member's access away.
 */
describe('viewer: distributed deployment, a gateway killed mid-stream and access taken away', function () {
  this.timeout(180_000);
  let cluster: GatewayCluster;
  let edge: ViewerEdge;
  let browser: Browser;
  let scenario: Scenario;
  let actors: Actors;
  let coreUrl: string;

  before(async () => {
    [cluster, browser] = await Promise.all([startGatewayCluster({ apis: 1, gateways: 1, gatewayEnv: { GATEWAY_RECHECK_MS: '1000' } }), launchChromium()]);
    coreUrl = cluster.core.url;
    ({ scenario, actors } = await cluster.scenario());
    edge = new ViewerEdge({ apiUrl: cluster.apis[0]!.url, gatewayUrl: cluster.gateways[0]!.url, coreUrl, rooms: [{ repositoryId: DEMO_REPOSITORY, label: 'demo repository' }] });
    await edge.start();
    // As the operator registers the viewer at core: its callback on VIEWER_PUBLIC_URL.
    await installViewerApp(cluster.core, [scenario.users.writer, scenario.users.reader, 'u_alice', 'u_bob'], edge.url);
  });
  after(async () => {
    await browser?.close();
    await edge?.stop();
    await cluster?.stop();
  });

  async function append(room: RoomScope, count: number, label: string): Promise<void> {
    const token = await actors.writer();
    for (let i = 0; i < count; i += 1) expectStatus(await cluster.apiClients[0]!.append(room, token, { bodyMarkdown: `${label} ${i}` }), 201);
  }

  async function listedIds(room: RoomScope): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { items: { messageId: string }[]; nextCursor: string | null } } = await cluster.apiClients[0]!.list(room, await actors.reader(), `limit=200${cursor ? `&cursor=${cursor}` : ''}`);
      ids.push(...page.body.items.map((m) => m.messageId));
      cursor = page.body.nextCursor;
    } while (cursor);
    return ids;
  }

  it('two people sign in by clicking through core, with the CSPs as served, and each sees a room; sign-out leads back to sign-in', async () => {
    const people = await Promise.all(['u_alice', 'u_bob'].map(async (userId) => ({ userId, ...(await personAt(browser)) })));
    try {
      await Promise.all(people.map(({ page, userId }) => signInByClicking(page, edge.url, userId)));
      for (const { page, problems } of people) {
        expect(page.url()).to.equal(`${edge.url}/#/r/${DEMO_REPOSITORY}`);
        expect(await page.locator('nav.rooms a[aria-current="page"]').textContent()).to.equal('acme/web');
        expect(problems).to.deep.equal([]);
      }
      await signOutAndBackIn(people[0]!.page, 'u_alice');
      expect(people[0]!.problems).to.deep.equal([]);
    } finally {
      for (const { context } of people) await context.close();
    }
  });

  it('the gateway is SIGKILLed mid-stream and restarted: the page shows it reconnecting, then catches up with no gap and no duplicate', async () => {
    const room: RoomScope = { repositoryId: scenario.repositoryId };
    await append(room, 5, 'before');
    const { context, page, problems } = await personAt(browser);
    try {
      await signInTo(page, edge.url, `#/r/${scenario.repositoryId}`, scenario.users.reader);
      await append(room, 10, 'live');
      await page.locator('li.message', { hasText: 'live 9' }).waitFor({ timeout: 15_000 });
      const gateway = cluster.gateways[0]!;
      await gateway.kill();
      await page.locator('.connection:not([data-state="open"])').waitFor({ timeout: 15_000 });
      await append(room, 10, 'while down');
      await sleep(300);
      await gateway.start();
      await append(room, 10, 'after');
      await page.locator('li.message', { hasText: 'after 9' }).waitFor({ timeout: 30_000 });
      await page.locator('.connection[data-state="open"]').waitFor({ timeout: 15_000 });
      const expected = await listedIds(room);
      expect(expected).to.have.length(35);
      expect(await messageIds(page), 'every message once, in list order').to.deep.equal(expected);
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('membership removed at core: the stream is reauthorized, refused, and the page goes back to sign-in', async () => {
    const { context, page, problems } = await personAt(browser);
    try {
      await signInTo(page, edge.url, `#/r/${scenario.repositoryId}`, scenario.users.reader);
      await updateFixture(cluster.core, (fixture) => {
        const repository = fixture.repositories.find((r) => r.id === scenario.repositoryId)!;
        delete repository.members[scenario.users.reader];
      });
      await page.getByRole('button', { name: 'Sign in with core' }).waitFor({ timeout: 20_000 });
      expect(await page.getByRole('alert').textContent()).to.contain('Sign in again');
      expect(await page.evaluate(() => sessionStorage.getItem('chat-viewer.session')), 'the session is gone').to.equal(null);
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });
});
