import { gzipSync } from 'node:zlib';
import { ulid } from 'ulid';
import { installViewerApp, launchChromium, signInTo, ViewerEdge, waitLive } from '../viewer/viewer-world.ts';
import type { BenchCluster } from './bench-cluster.ts';
import { benchTokens, branchMessagesPath, takeStreamBranches } from './stream-rooms.ts';
import { percentile, round } from './stats.ts';
import type { StreamScenario } from './stream-scenarios.ts';

const ROOM_MESSAGES = 10_000;
const OPENINGS = 3;

/** Fills a room with `count` messages through the API, `concurrency` appends at a time. */
async function fillRoom(apiUrl: string, path: string, tokens: string[], count: number, concurrency = 32): Promise<string> {
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
  // The newest message, by the list's own order.
  let cursor: string | null = null;
  let newest = '';
  do {
    const page = (await (await fetch(`${apiUrl}${path}?limit=200${cursor ? `&cursor=${cursor}` : ''}`, { headers: { authorization: `Bearer ${tokens[0]}` } })).json()) as { items: { messageId: string }[]; nextCursor: string | null };
    newest = page.items.at(-1)?.messageId ?? newest;
    cursor = page.nextCursor;
  } while (cursor);
  return newest;
}

/**
 * The web viewer's two figures: the JavaScript a browser downloads (gzipped, as served), and the
 * time from opening a room of 10,000 messages (a hash change in a signed-in page) to its newest
 * message being on screen, in Debian's Chromium, through the deployment's own API and gateways.
 */
export const viewerScenario: StreamScenario = {
  key: 'viewer',
  async run(cluster: BenchCluster, { quick }) {
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

      const [bigRoom, smallRoom] = takeStreamBranches(cluster, 2) as [string, string];
      const { writers } = await benchTokens(cluster);
      const count = quick ? 2_000 : ROOM_MESSAGES;
      const newest = await fillRoom(cluster.apiUrls[0]!, branchMessagesPath(cluster, bigRoom), writers, count);
      const viewerUser = cluster.fixture.writers[0]!;
      await installViewerApp(cluster.core, [viewerUser], origin);
      const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
      const page = await context.newPage();
      const repository = cluster.fixture.repositoryId;
      await signInTo(page, origin, `#/r/${repository}/b/${smallRoom}`, viewerUser);
      const samples: number[] = [];
      for (let i = 0; i < OPENINGS; i += 1) {
        if (i > 0) {
          await page.evaluate((hash) => (location.hash = hash), `#/r/${repository}/b/${smallRoom}`);
          await waitLive(page);
        }
        // Polled on every animation frame: the figure ends at the first frame with the newest message in view.
        await page.evaluate((hash) => {
          (window as unknown as { openedAt: number }).openedAt = performance.now();
          location.hash = hash;
        }, `#/r/${repository}/b/${bigRoom}`);
        const shown = await page.waitForFunction(
          (id) => {
            const item = document.getElementById(`m-${id}`);
            const view = document.querySelector('.timeline');
            if (!item || !view) return false;
            const box = item.getBoundingClientRect();
            const frame = view.getBoundingClientRect();
            return box.top < frame.bottom && box.bottom > frame.top ? performance.now() - (window as unknown as { openedAt: number }).openedAt : false;
          },
          newest,
          { polling: 'raf', timeout: 60_000 },
        );
        const ms = (await shown.jsonValue()) as number;
        samples.push(ms);
      }
      await context.close();
      return [
        { name: 'viewer JavaScript shipped, gzipped', value: `${round(jsBytes / 1024, 1)} KB (${jsFiles} file${jsFiles === 1 ? '' : 's'})`, target: '≤ 100 KB' },
        {
          name: `viewer: open a room of ${count.toLocaleString('en-US')} messages to its newest on screen`,
          value: `median ${Math.round(percentile(samples, 50))} ms, worst ${Math.round(Math.max(...samples))} ms (${OPENINGS} openings)`,
          target: '< 2 s',
          note: 'Chromium, history read oldest first in pages of 200',
        },
      ];
    } finally {
      await browser.close();
      await edge?.stop();
    }
  },
};
