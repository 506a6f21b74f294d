import { readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { packageFolders, repoPath, walkTree } from './workspace-sources.ts';

/**
 * What ships: the image carries every workspace package's `src/` (see the Dockerfile and
 * .dockerignore), so test code must live in the package's `test/` folder, never under `src/`, and no
 * production file may import it. Tests beside the code (`*.test.ts`) may import test helpers.
 */

/** Folder names that hold test code; none may exist under a package's `src/`. */
export const TEST_FOLDER_NAMES = ['test-support', 'testing', 'fixtures', 'test', 'tests', '__tests__'] as const;

/**
 * Folders under `src/` allowed despite their name, each with its reason. dev-core's bundled demo
 * fixture is runtime data (`DEV_CORE_FIXTURE` defaults to it), not test code.
 */
export const ALLOWED_SRC_FOLDERS: ReadonlyMap<string, string> = new Map([
  ['services/dev-core/src/fixtures', "dev-core's bundled runtime fixture (data only)"],
]);

const CODE_FILE = /\.(?:[cm]?ts|[cm]?js|tsx|jsx)$/;
const TEST_FILE = /\.test\.(?:[cm]?ts|[cm]?js|tsx|jsx)$/;
const FIXTURE_FILE = /\.fixture\.(?:[cm]?ts|[cm]?js|json)$/;
/** `from '…'`, `import '…'`, `import('…')`, `require('…')`. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)(['"])([^'"\n]+)\1/g;
/** A bare specifier naming a test entry point of a package, e.g. `@chat/backbone/testing`. */
const TEST_PACKAGE_PATH = /^(?:@[^/]+\/)?[^/]+\/(?:.*\/)?(?:test|tests|testing|test-support|fixtures)(?:\/|$)/;

export interface LayoutIssue {
  /** Path relative to the repository root, with `/` separators. */
  file: string;
  problem: string;
}

/** True when `target` (absolute) is test code: inside a test folder, or a test or fixture file. */
function isTestPath(repoRoot: string, target: string): boolean {
  const segments = repoPath(repoRoot, target).split('/');
  const name = segments.at(-1) ?? '';
  if (TEST_FILE.test(name) || FIXTURE_FILE.test(name)) return true;
  const folders = segments.slice(0, -1);
  if (folders[0] === 'tests') return true;
  const allowed = [...ALLOWED_SRC_FOLDERS.keys()].some((f) => repoPath(repoRoot, target).startsWith(`${f}/`));
  return !allowed && folders.some((f) => (TEST_FOLDER_NAMES as readonly string[]).includes(f) || f === 'bench');
}

async function checkFile(repoRoot: string, file: string, issues: LayoutIssue[]): Promise<void> {
  const rel = repoPath(repoRoot, file);
  const name = basename(file);
  if (FIXTURE_FILE.test(name)) {
    issues.push({ file: rel, problem: 'a fixture file under src/; move it to the package\'s test/ folder' });
    return;
  }
  if (!CODE_FILE.test(name) || TEST_FILE.test(name)) return;
  const text = await readFile(file, 'utf8');
  for (const match of text.matchAll(SPECIFIER)) {
    const specifier = match[2]!;
    const relativeImport = specifier.startsWith('.');
    const testImport = relativeImport ? isTestPath(repoRoot, resolve(dirname(file), specifier)) : TEST_PACKAGE_PATH.test(specifier);
    if (testImport) issues.push({ file: rel, problem: `production code imports test code: '${specifier}'` });
  }
}

/** Notes `folder` when it is a test folder under `src/` (beyond {@link ALLOWED_SRC_FOLDERS}). */
function checkFolder(repoRoot: string, folder: string, issues: LayoutIssue[]): void {
  const rel = repoPath(repoRoot, folder);
  const name = basename(folder);
  if ((TEST_FOLDER_NAMES as readonly string[]).includes(name) && !ALLOWED_SRC_FOLDERS.has(rel)) {
    issues.push({ file: rel, problem: `a ${name}/ folder under src/; move it to the package's test/ folder` });
  }
}

/**
 * Checks every `clients/<name>/src`, `libraries/<name>/src` and `services/<name>/src` under `repoRoot`: no test folder or
 * fixture file there (beyond {@link ALLOWED_SRC_FOLDERS}), and no file other than a `*.test.ts`
 * importing test code (a test folder, a test or fixture file, `tests/`, a bench, or a package's
 * test entry point such as `@chat/x/testing`).
 */
export async function checkSourceLayout(repoRoot: string): Promise<LayoutIssue[]> {
  const issues: LayoutIssue[] = [];
  for (const pkg of await packageFolders(repoRoot)) {
    for await (const { path, folder } of walkTree(join(pkg, 'src'))) {
      if (folder) checkFolder(repoRoot, path, issues);
      else await checkFile(repoRoot, path, issues);
    }
  }
  return issues.sort((a, b) => a.file.localeCompare(b.file));
}

/** The lines of .dockerignore that keep every package's test code out of the image. */
export const DOCKERIGNORE_TEST_LINES = ['clients/*/test', 'libraries/*/test', 'services/*/test', 'services/*/bench', '**/*.test.ts'] as const;

/** Which of {@link DOCKERIGNORE_TEST_LINES} the repository's .dockerignore lacks. */
export async function missingDockerignoreLines(repoRoot: string): Promise<string[]> {
  const lines = new Set((await readFile(join(repoRoot, '.dockerignore'), 'utf8')).split('\n').map((l) => l.trim()));
  return DOCKERIGNORE_TEST_LINES.filter((l) => !lines.has(l));
}
