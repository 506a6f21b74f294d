/**
 * How the lints in this folder find what they read: the workspace's package folders, and every
 * folder and file beneath one, taken from the disk as it is (installed packages and build output
 * left out).
 */
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';

/** The folders whose packages are the server and its clients, the ones whose `src/` ships. */
export const PACKAGE_GROUPS = ['clients', 'libraries', 'services'] as const;

/** Folders no lint reads: installed packages and build output. */
const NEVER_READ = new Set(['node_modules', 'dist']);

/** One folder or file found by {@link walkTree}. */
export interface TreeEntry {
  /** Absolute path. */
  path: string;
  folder: boolean;
}

/** `path` relative to `root`, with `/` separators whatever the platform. */
export function repoPath(root: string, path: string): string {
  return relative(root, path).split(sep).join('/');
}

/** The entries of `dir` sorted by name, so every lint reports in one order; none when `dir` is missing or a file. */
export async function entriesOf(dir: string): Promise<Dirent[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw err;
  }
}

/** Every package folder (`<group>/<name>`, absolute) of `groups`. @defaultValue groups {@link PACKAGE_GROUPS} */
export async function packageFolders(repoRoot: string, groups: readonly string[] = PACKAGE_GROUPS): Promise<string[]> {
  const folders: string[] = [];
  for (const group of groups) {
    for (const entry of await entriesOf(join(repoRoot, group))) if (entry.isDirectory()) folders.push(join(repoRoot, group, entry.name));
  }
  return folders;
}

/**
 * Every folder and file under `dir`, depth first, each folder before what it holds. node_modules,
 * dist and any path `skip` names are left out with all they hold; a missing `dir` holds nothing.
 */
export async function* walkTree(dir: string, skip: (path: string) => boolean = () => false): AsyncGenerator<TreeEntry> {
  for (const entry of await entriesOf(dir)) {
    const path = join(dir, entry.name);
    if (NEVER_READ.has(entry.name) || skip(path)) continue;
    if (entry.isDirectory()) {
      yield { path, folder: true };
      yield* walkTree(path, skip);
    } else if (entry.isFile()) {
      yield { path, folder: false };
    }
  }
}

/** The files under `dir` (as {@link walkTree} finds them) whose names `accept` takes. */
export async function filesUnder(dir: string, accept: (name: string) => boolean, skip?: (path: string) => boolean): Promise<string[]> {
  const files: string[] = [];
  for await (const entry of walkTree(dir, skip)) if (!entry.folder && accept(basename(entry.path))) files.push(entry.path);
  return files;
}
