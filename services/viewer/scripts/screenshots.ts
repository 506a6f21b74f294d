/**
 * Takes the README's screenshots of the viewer (sign-in, a room, the `@` picker, the inbox, a permalink's
 * highlighted message, a 360 px phone) with
 * Debian's Chromium against a fresh all-in-one with dev-core's demo fixture, and writes them to
 * `docs/viewer-*.png`. Run with `pnpm --filter @chat/viewer screenshots` after `pnpm build`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { newUlid } from '@chat/client';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const docs = join(root, 'docs');
const REPOSITORY = '01JGFJJZ00QNYBVPQTAT49MN0F';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const dataDir = mkdtempSync(join(tmpdir(), 'viewer-screenshots-'));
const child = spawn(process.execPath, ['--import', 'tsx', 'services/all-in-one/src/main.ts'], {
  cwd: root,
  env: { ...process.env, PORT: '0', DEV_CORE_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let output = '';
child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));

async function started(): Promise<{ url: string; coreUrl: string }> {
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    const url = /^chat service: (\S+)$/m.exec(output)?.[1];
    const coreUrl = /^core:\s+(\S+)$/m.exec(output)?.[1];
    if (url && coreUrl && output.includes('viewer: open')) return { url, coreUrl };
    if (child.exitCode !== null) throw new Error(`the all-in-one exited with ${child.exitCode}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('the all-in-one did not start');
}

async function json(url: string, init: RequestInit & { body?: string } = {}): Promise<unknown> {
  const response = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });
  if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${url} answered ${response.status}: ${await response.text()}`);
  return response.json();
}

async function post(url: string, token: string, bodyMarkdown: string, mentions?: unknown[]): Promise<void> {
  await json(`${url}/v1/repositories/${REPOSITORY}/room/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'idempotency-key': newUlid() },
    body: JSON.stringify({ bodyMarkdown, ...(mentions ? { mentions } : {}) }),
  });
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.waitForTimeout(400);
  await page.screenshot({ path: join(docs, `viewer-${name}.png`) });
  process.stdout.write(`docs/viewer-${name}.png\n`);
}

try {
  // The all-in-one registered the viewer's callback on its own port at its dev-core.
  const { url, coreUrl } = await started();
  const token = async (request: object) => ((await json(`${coreUrl}/dev/tokens`, { method: 'POST', body: JSON.stringify(request) })) as { token: string }).token;
  const alice = await token({ type: 'human', subjectId: 'u_alice' });
  const bot = await token({ type: 'bot', subjectId: 'b_ci', credentialId: 'c_1' });
  await post(url, alice, 'Morning! The release branch is cut; the notes are in `docs/release.md`.');
  await post(url, bot, '@u_alice the build **passed** for f159235 on main (3 min 12 s).', [{ principalKind: 'human', principalId: 'u_alice', startByte: 0, endByte: 8 }]);
  await post(url, alice, 'Thanks. 6bdfa39 fixes the flaky inbox test; 0123abc is not a commit here. To run it:\n\n```\npnpm --filter @chat/tests test\n```');
  await post(url, bot, 'Deploy of **8d4209e** to staging: _done_. See the [dashboard](https://example.com/ci).');

  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  try {
    const context = await browser.newContext({ viewport: { width: 1100, height: 640 }, deviceScaleFactor: 1 });
    const page = await context.newPage();
    await page.goto(`${url}/#/r/${REPOSITORY}`);
    await page.getByRole('button', { name: 'Sign in with core' }).waitFor();
    await shoot(page, 'sign-in');
    // Signed in as a person does: through core's sign-in page.
    await page.getByRole('button', { name: 'Sign in with core' }).click();
    await page.getByRole('heading', { name: 'Sign in to core' }).waitFor();
    await page.getByRole('button', { name: 'u_alice', exact: true }).click();
    await page.locator('.connection[data-state="open"]').waitFor({ timeout: 60_000 });
    await page.locator('a.commit-link').nth(2).waitFor();
    await page.locator('details.attribution').nth(1).evaluate((d) => ((d as HTMLDetailsElement).open = true));
    await shoot(page, 'room');
    // The `@` picker lists the room's readers from core's member directory, the active one moved by a key.
    const box = page.getByLabel('Message (Markdown)');
    await box.click();
    await page.keyboard.type('Could one of you look at the release notes? @');
    await page.getByRole('listbox').getByRole('option').nth(3).waitFor();
    await page.keyboard.press('ArrowDown');
    await shoot(page, 'mentions');
    await page.keyboard.press('Escape');
    await box.fill('');
    await page.getByRole('button', { name: /Inbox/ }).click();
    await page.getByRole('heading', { name: /Inbox/ }).waitFor();
    await shoot(page, 'inbox');
    await page.getByRole('button', { name: 'Close the inbox' }).click();
    // A permalink opened: the room around the message it names, that message highlighted.
    const permalink = await page.locator('li.message', { hasText: 'the build' }).locator('a.permalink').getAttribute('href');
    if (!permalink) throw new Error('the message has no permalink');
    await page.goto(permalink);
    await page.locator('li.message.highlighted').waitFor();
    await shoot(page, 'permalink');
    await page.goto(`${url}/#/r/${REPOSITORY}`);
    await page.locator('.connection[data-state="open"]').waitFor({ timeout: 60_000 });
    await page.setViewportSize({ width: 360, height: 740 });
    await shoot(page, '360');
  } finally {
    await browser.close();
  }
} finally {
  child.kill('SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
}
