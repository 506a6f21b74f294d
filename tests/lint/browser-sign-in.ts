import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { filesUnder, packageFolders } from './workspace-sources.ts';

/**
 * Ways a browser test could sign in that no person can take: opening core's session by a request
 * rather than through core's sign-in page, or putting cookies, storage or scripts into the browser,
 * or switching its Content-Security-Policy off (which is how a CSP that blocks sign-in went unseen).
 */
const SHORTCUTS: ReadonlyArray<{ name: string; pattern: RegExp }> = [
  { name: "dev-core's sign-in endpoint called directly", pattern: /\/dev\/session\b/ },
  { name: "the browser context's request API", pattern: /\.request\.(?:post|fetch|get|put|patch|delete|head)\s*\(|\brequest\.newContext\s*\(/ },
  { name: 'cookies put into the browser', pattern: /\baddCookies\s*\(|\bdocument\.cookie\s*=(?!=)/ },
  { name: 'storage written by the test', pattern: /\b(?:sessionStorage|localStorage)\.setItem\s*\(|\bstorageState\b/ },
  { name: 'a script injected into the page', pattern: /\baddInitScript\s*\(/ },
  { name: 'the CSP switched off', pattern: /\bbypassCSP\b/ },
];

/** Whether a source drives a browser: it imports playwright or the viewer's browser test helpers. */
function drivesBrowser(source: string): boolean {
  return /from\s+['"](?:playwright-core|playwright|[^'"]*\/viewer-world(?:\.ts)?)['"]/.test(source);
}

/** The sign-in shortcuts in one source (`file:line name`), or none when it drives no browser. */
export function signInShortcuts(file: string, source: string): string[] {
  if (!drivesBrowser(source)) return [];
  const found: string[] = [];
  source.split('\n').forEach((line, index) => {
    for (const { name, pattern } of SHORTCUTS) if (pattern.test(line)) found.push(`${file}:${index + 1} ${name}`);
  });
  return found;
}

/**
 * Every sign-in shortcut in the repository's test and script sources: `tests/` (but this lint), and
 * each package's and service's `test/` and `scripts/`.
 */
export async function findSignInShortcuts(repoRoot: string): Promise<string[]> {
  const lint = join(repoRoot, 'tests', 'lint');
  const roots = [join(repoRoot, 'tests')];
  for (const folder of await packageFolders(repoRoot)) roots.push(join(folder, 'test'), join(folder, 'scripts'));
  const found: string[] = [];
  for (const root of roots) {
    for (const file of await filesUnder(root, (name) => /\.tsx?$/.test(name), (path) => path === lint)) {
      found.push(...signInShortcuts(relative(repoRoot, file), await readFile(file, 'utf8')));
    }
  }
  return found;
}
