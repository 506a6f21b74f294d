/**
 * The production image's file tree without a Docker engine: runs the Dockerfile's own `pnpm deploy`
 * command (target redirected to a temporary folder) on the built workspace, then places its output
 * where the runtime stage's COPY instructions put it.
 */
import { execFile } from 'node:child_process';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix, relative } from 'node:path';
import { promisify } from 'node:util';
import { readDockerfilePlan, type DockerfilePlan } from './dockerfile.ts';

const run = promisify(execFile);

/** One entry of the image: its absolute path inside the image and whether it is a directory. */
export interface ImageEntry {
  path: string;
  directory: boolean;
}

export interface ImageContents {
  plan: DockerfilePlan;
  entries: ImageEntry[];
  /** Where an image path lives on this machine (undefined outside what the runtime stage copies). */
  hostPath(imagePath: string): string | undefined;
  /** Image folders of the workspace packages (`@chat/*`), by package name. */
  workspacePackages: Map<string, string>;
  remove(): Promise<void>;
}

/** Runs the Dockerfile's deploy step from `repoRoot` (which must be built) and lays out the image. */
export async function assembleImage(repoRoot: string): Promise<ImageContents> {
  const plan = readDockerfilePlan(join(repoRoot, 'Dockerfile'));
  const scratch = await mkdtemp(join(tmpdir(), 'chat-image-'));
  const deployDir = join(scratch, 'deploy');
  await run('pnpm', [...plan.deployArgs.slice(0, -1), deployDir], { cwd: repoRoot, env: { ...process.env, CI: 'true' }, maxBuffer: 16 << 20 });

  // Each runtime COPY takes a folder the deploy step wrote; nothing else of the build stage.
  const mounts = plan.copies.map((copy) => {
    const inside = posix.relative(plan.deployTarget, copy.source);
    if (copy.from !== 'build' || inside.startsWith('..')) {
      throw new Error(`runtime COPY --from=${copy.from} ${copy.source}: only the deploy output (${plan.deployTarget}) may be copied`);
    }
    return { imageRoot: copy.destination.replace(/\/$/, ''), hostRoot: join(deployDir, inside) };
  });
  const hostPath = (imagePath: string) => {
    const mount = mounts.find((m) => imagePath === m.imageRoot || imagePath.startsWith(`${m.imageRoot}/`));
    return mount && join(mount.hostRoot, imagePath.slice(mount.imageRoot.length));
  };
  const entries = mounts.flatMap((m) => walk(m.hostRoot).map((e) => ({ ...e, path: posix.join(m.imageRoot, e.path) })));

  const workspacePackages = new Map<string, string>();
  for (const entry of entries.filter((e) => !e.directory && posix.basename(e.path) === 'package.json')) {
    const name = (JSON.parse(readFileSync(hostPath(entry.path)!, 'utf8')) as { name?: string }).name ?? '';
    if (name.startsWith('@chat/')) workspacePackages.set(name, posix.dirname(entry.path));
  }
  return { plan, entries, hostPath, workspacePackages, remove: () => rm(scratch, { recursive: true, force: true }) };
}

/** Every file and folder under `root` (symbolic links listed, not followed, as COPY keeps them). */
function walk(root: string): Array<{ path: string; directory: boolean }> {
  const found: Array<{ path: string; directory: boolean }> = [];
  const visit = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      const directory = lstatSync(full).isDirectory();
      found.push({ path: relative(root, full).split('\\').join('/'), directory });
      if (directory) visit(full);
    }
  };
  visit(root);
  return found;
}

/**
 * Names of the npm packages installed in the image, from pnpm's virtual store folders
 * (`node_modules/.pnpm/<name>@<version>...`, scopes written `@scope+name`).
 */
export function installedPackageNames(entries: ImageEntry[]): Set<string> {
  const names = new Set<string>();
  for (const { path, directory } of entries) {
    const store = /\/node_modules\/\.pnpm\/([^/]+)$/.exec(path);
    if (directory && store) names.add(store[1]!.replace(/^(@?[^@]+)@.*$/, '$1').replace('+', '/'));
  }
  return names;
}
