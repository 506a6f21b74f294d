import { expect } from 'chai';
import { testConfig } from '../harness/test-config.ts';
import { findSignInShortcuts, signInShortcuts } from './browser-sign-in.ts';

describe('lint: browser tests sign in through the page, never through a request', () => {
  it('finds each shortcut in a browser test (the check can fail)', () => {
    const shortcut = [
      "import { chromium } from 'playwright-core';",
      "await context.request.post(`${coreUrl}/dev/session`, { data: { userId: 'u_alice' } });",
      "await context.addCookies([{ name: 'core_session', value: token, url: coreUrl }]);",
      "await page.evaluate(() => sessionStorage.setItem('chat-viewer.session', '{}'));",
      "await context.addInitScript(() => localStorage.setItem('x', 'y'));",
      'const context = await browser.newContext({ bypassCSP: true });',
    ].join('\n');
    expect(signInShortcuts('fixture.ts', shortcut)).to.deep.equal([
      "fixture.ts:2 dev-core's sign-in endpoint called directly",
      "fixture.ts:2 the browser context's request API",
      'fixture.ts:3 cookies put into the browser',
      'fixture.ts:4 storage written by the test',
      'fixture.ts:5 storage written by the test',
      'fixture.ts:5 a script injected into the page',
      'fixture.ts:6 the CSP switched off',
    ]);
    const helperUser = "import { personAt } from './viewer-world.ts';\nawait page.request.post(url);";
    expect(signInShortcuts('helper-user.ts', helperUser)).to.deep.equal(["helper-user.ts:2 the browser context's request API"]);
  });

  it('leaves clicking, reading storage, and tests without a browser alone', () => {
    const clicking = [
      "import type { Page } from 'playwright-core';",
      "await page.getByRole('button', { name: 'u_alice', exact: true }).click();",
      "expect(await page.evaluate(() => sessionStorage.getItem('chat-viewer.session'))).to.equal(null);",
    ].join('\n');
    expect(signInShortcuts('clicking.ts', clicking)).to.deep.equal([]);
    expect(signInShortcuts('rest.ts', "await core.call('POST', '/dev/session', { userId });")).to.deep.equal([]);
  });

  it('finds none in the browser tests and scripts', async () => {
    expect(await findSignInShortcuts(testConfig.repoRoot)).to.deep.equal([]);
  });
});
