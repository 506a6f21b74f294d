import { gzipSync } from 'node:zlib';
import { ulid } from 'ulid';
import type { Page } from 'playwright-core';
import { installViewerApp, launchChromium, signInTo, ViewerEdge, waitLive } from '../viewer/viewer-world.ts';
import type { BenchCluster } from './bench-cluster.ts';
import { seedGrowth } from './growth-seed.ts';
import { benchTokens, branchMessagesPath, takeStreamBranches } from './stream-rooms.ts';
import { percentile, round } from './stats.ts';
import type { StreamScenario } from './stream-scenarios.ts';

const ROOM_MESSAGES = 10_000;
/** The large room, seeded straight into the store: appending a million messages through the API takes far too long. */
const LARGE_ROOM_MESSAGES = 1_000_000;
const OPENINGS = 3;

/** Fills a room with `count` messages through the API, `concurrency` appends at a time. */
async function fillRoom(apiUrl: string, path: string, tokens: string[], count: number, concurrency = 32): Promise<void> {
  let next = 0;
  const worker = async (w: number) => {
    const token = tokens[w % tokens.length]!;
    for (let i = next++; i < count; i = next++) {
      const response = await fetch(`${apiUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': ulid() },
        body: JSON.stringify({ bodyMarkdown: `message ${i} of the viewer's big room, with a little **Markdown** and \`code\`` }),
      });
      if (response.status !== 201) throw new Error(`append answered ${response.status}: ${await response.text()}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
}

/** The newest message of a room and the oldest with its cursor, read through the API (one page each). */
async function roomEnds(apiUrl: string, path: string, token: string): Promise<{ newest: string; oldest: string; oldestCursor: string }> {
  const get = async (query: string) => (await (await fetch(`${apiUrl}${path.replace(/\/messages$/, '')}/${query}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { items: { messageId: string }[]; nextCursor?: string | null };
  const newest = (await get('history?limit=1')).items[0]!.messageId;
  // A one-item page of the list ends at the oldest message, so its nextCursor is that message's cursor.
  const first = await get('messages?limit=1');
  return { newest, oldest: first.items[0]!.messageId, oldestCursor: first.nextCursor! };
}

/**
 * Milliseconds from `start` (run in the page) to the first animation frame on which `selector`
 * matches an element inside the timeline's view.
 */
async function timeUntilInView(page: Page, start: string, selector: string): Promise<number> {
  await page.evaluate(`window.benchStartedAt = performance.now(); ${start}`);
  const shown = await page.waitForFunction(
    (css) => {
      const item = document.querySelector(css);
      const view = document.querySelector('.timeline');
      if (!item || !view) return false;
      const box = item.getBoundingClientRect();
      const frame = view.getBoundingClientRect();
      return box.top < frame.bottom && box.bottom > frame.top ? performance.now() - (window as unknown as { benchStartedAt: number }).benchStartedAt : false;
    },
    selector,
    { polling: 'raf', timeout: 60_000 },
  );
  return (await shown.jsonValue()) as number;
}

const summary = (samples: number[]) => `median ${Math.round(percentile(samples, 50))} ms, worst ${Math.round(Math.max(...samples))} ms (${samples.length} runs)`;
/**
 * The web viewer's figures, in Debian's Chromium through the deployment's own API and gateways: the
 * JavaScript a browser downloads (gzipped, as served); the time from opening a room (a hash change in
 * a signed-in page) to its newest message on screen, for a room of 10,000 messages (appended through
 * the API) and one of 1,000,000 (seeded in bulk into the deployment's store, in both modes); the time
 * from opening a permalink to the large room's oldest message to that message on screen; and the
 * time from scrolling to the top to the next 100 older messages on screen.
 */
export const viewerScenario: StreamScenario = {
  key: 'viewer',
  async run(cluster: BenchCluster, { quick }) {
    const [bigRoom, smallRoom, largeRoom] = takeStreamBranches(cluster, 3) as [string, string, string];
    // The large room first, before anything holds a connection: the all-in-one is restarted for it (bench-cluster.ts).
    const largeCount = quick ? 100_000 : LARGE_ROOM_MESSAGES;
    const seeded = await cluster.seedStore((store) =>
      seedGrowth(store, { repositoryId: cluster.fixture.repositoryId, branchIds: [largeRoom], roomIds: [ulid()], perRoom: largeCount, bigRoomExtra: 0, senders: cluster.fixture.writers }),
    );
    // The all-in-one serves the viewer itself; the distributed shape gets the edge that routes as the ingress does.
    const edge = cluster.mode === 'all-in-one' ? undefined : new ViewerEdge({ apiUrl: cluster.apiUrls[0]!, gatewayUrl: cluster.gatewayUrls[0]!, coreUrl: cluster.core.url });
    await edge?.start();
    const origin = edge?.url ?? cluster.apiUrls[0]!;
    const browser = await launchChromium();
    try {
      const html = await (await fetch(`${origin}/`)).text();
      let jsBytes = 0;
      let jsFiles = 0;
      for (const [, src] of html.matchAll(/<script[^>]+src="([^"]+)"/g)) {
        const response = await fetch(`${origin}${src}`, { headers: { 'accept-encoding': 'gzip' } });
        const body = Buffer.from(await response.arrayBuffer());
        // fetch decodes the body: its gzip size is what travelled when the server sent it encoded.
        jsBytes += response.headers.get('content-encoding') === 'gzip' ? gzipSync(body, { level: 9 }).length : body.length;
        jsFiles += 1;
      }

      const { writers, readers } = await benchTokens(cluster);
      const count = quick ? 2_000 : ROOM_MESSAGES;
      const apiUrl = cluster.apiUrls[0]!;
      await fillRoom(apiUrl, branchMessagesPath(cluster, bigRoom), writers, count);
      const viewerUser = cluster.fixture.writers[0]!;
      await installViewerApp(cluster.core, [viewerUser], origin);
      const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
      const page = await context.newPage();
      const repository = cluster.fixture.repositoryId;
      const roomHash = (branch: string) => `#/r/${repository}/b/${branch}`;
      const go = (hash: string) => `location.hash = ${JSON.stringify(hash)}`;
      await signInTo(page, origin, roomHash(smallRoom), viewerUser);
      const toSmallRoom = async () => {
        await page.evaluate(go(roomHash(smallRoom)));
        await waitLive(page);
      };

      /** Opens `branch` from the small room `OPENINGS` times; the figure ends with the newest message in view. */
      const openings = async (branch: string) => {
        const { newest } = await roomEnds(apiUrl, branchMessagesPath(cluster, branch), readers[0]!);
        const samples: number[] = [];
        for (let i = 0; i < OPENINGS; i += 1) {
          await toSmallRoom();
          samples.push(await timeUntilInView(page, go(roomHash(branch)), `#m-${newest}`));
        }
        return samples;
      };
      const small = await openings(bigRoom);
      const largeOpenings = await openings(largeRoom);
      const ends = await roomEnds(apiUrl, branchMessagesPath(cluster, largeRoom), readers[0]!);
      const permalink = `${roomHash(largeRoom)}/m/${ends.oldest}/${ends.oldestCursor}`;
      const permalinks: number[] = [];
      for (let i = 0; i < OPENINGS; i += 1) {
        await toSmallRoom();
        permalinks.push(await timeUntilInView(page, go(permalink), `li.message.highlighted#m-${ends.oldest}`));
      }
      // Scrolling up at the newest page of the large room: each turn reads the next 100 older messages.
      await page.evaluate(go(roomHash(largeRoom)));
      await waitLive(page);
      const scrolls: number[] = [];
      for (let i = 0; i < OPENINGS; i += 1) {
        const rendered = await page.locator('li.message').count();
        // The read keeps the message at the top in place: the figure ends when the message just above
        // it, the newest of the 100 read (the 100th item then), is in view, so all 100 are rendered.
        scrolls.push(await timeUntilInView(page, `document.querySelector('.timeline').scrollTop = 0`, 'ol.messages > li.message:nth-child(100)'));
        await page.waitForFunction((n) => document.querySelectorAll('li.message').length >= n, rendered + 100);
      }
      await context.close();
      return [
        { name: 'viewer JavaScript shipped, gzipped', value: `${round(jsBytes / 1024, 1)} KB (${jsFiles} file${jsFiles === 1 ? '' : 's'})`, target: '≤ 100 KB' },
        {
          name: `viewer: open a room of ${count.toLocaleString('en-US')} messages to its newest on screen`,
          value: summary(small),
          target: '< 1 s',
          note: 'Chromium, the newest page of 100 through the history read, then the stream from its last cursor',
        },
        {
          name: `viewer: open a room of ${largeCount.toLocaleString('en-US')} messages to its newest on screen`,
          value: summary(largeOpenings),
          target: '< 1 s',
          note: `seeded in bulk in ${Math.round(seeded.seconds)} s, ${cluster.mode === 'all-in-one' ? "into the embedded store's folder with the all-in-one stopped" : 'into PostgreSQL'}`,
        },
        { name: `viewer: permalink to the oldest of ${largeCount.toLocaleString('en-US')} messages, on screen and highlighted`, value: summary(permalinks), target: '< 1 s', note: 'read before and at its cursor' },
        { name: 'viewer: 100 older messages by scrolling up', value: summary(scrolls), target: '< 300 ms', note: `in the room of ${largeCount.toLocaleString('en-US')}` },
      ];
    } finally {
      await browser.close();
      await edge?.stop();
    }
  },
};
