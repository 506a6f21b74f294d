import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';

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

/** Workspace folders whose packages have a `src/` that ships. */
const PACKAGE_ROOTS = ['clients', 'libraries', 'services'];

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

const posix = (path: string) => path.split(sep).join('/');

async function listDir(dir: string) {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/** Every `<root>/<package>/src` folder of the workspace. */
async function sourceRoots(repoRoot: string): Promise<string[]> {
  const roots: string[] = [];
  for (const top of PACKAGE_ROOTS) {
    for (const entry of await listDir(join(repoRoot, top))) {
      if (!entry.isDirectory()) continue;
      const src = join(repoRoot, top, entry.name, 'src');
      if ((await listDir(src)).length > 0) roots.push(src);
    }
  }
  return roots;
}

/** True when `target` (absolute) is test code: inside a test folder, or a test or fixture file. */
function isTestPath(repoRoot: string, target: string): boolean {
  const segments = posix(relative(repoRoot, target)).split('/');
  const name = segments.at(-1) ?? '';
  if (TEST_FILE.test(name) || FIXTURE_FILE.test(name)) return true;
  const folders = segments.slice(0, -1);
  if (folders[0] === 'tests') return true;
  const allowed = [...ALLOWED_SRC_FOLDERS.keys()].some((f) => posix(relative(repoRoot, target)).startsWith(`${f}/`));
  return !allowed && folders.some((f) => (TEST_FOLDER_NAMES as readonly string[]).includes(f) || f === 'bench');
}

async function checkFile(repoRoot: string, file: string, issues: LayoutIssue[]): Promise<void> {
  const rel = posix(relative(repoRoot, file));
  const name = rel.split('/').at(-1) ?? '';
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

async function walk(repoRoot: string, dir: string, issues: LayoutIssue[]): Promise<void> {
  for (const entry of await listDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name === 'node_modules') continue;
      const rel = posix(relative(repoRoot, path));
      if ((TEST_FOLDER_NAMES as readonly string[]).includes(entry.name) && !ALLOWED_SRC_FOLDERS.has(rel)) {
        issues.push({ file: rel, problem: `a ${entry.name}/ folder under src/; move it to the package's test/ folder` });
      }
      await walk(repoRoot, path, issues);
    } else if (entry.isFile()) {
      await checkFile(repoRoot, path, issues);
    }
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
  for (const src of await sourceRoots(repoRoot)) await walk(repoRoot, src, issues);
  return issues.sort((a, b) => a.file.localeCompare(b.file));
}

/** The lines of .dockerignore that keep every package's test code out of the image. */
export const DOCKERIGNORE_TEST_LINES = ['clients/*/test', 'libraries/*/test', 'services/*/test', 'services/*/bench', '**/*.test.ts'] as const;

/** Which of {@link DOCKERIGNORE_TEST_LINES} the repository's .dockerignore lacks. */
export async function missingDockerignoreLines(repoRoot: string): Promise<string[]> {
  const lines = new Set((await readFile(join(repoRoot, '.dockerignore'), 'utf8')).split('\n').map((l) => l.trim()));
  return DOCKERIGNORE_TEST_LINES.filter((l) => !lines.has(l));
}
