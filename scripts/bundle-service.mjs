// `node ../../scripts/bundle-service.mjs dist/main.js [dist/other-main.js...]`, in a service's package
// folder after tsc: replaces each compiled entry with one ES module holding the entry and everything
// it imports (workspace packages and third-party), so that a start reads and links one file instead
// of ~1,400 (module resolution and loading were most of a service's CPU until ready).
//
// The workspace packages' other dist/ files stay where they are: what a module finds beside itself
// through `import.meta.url` (the store's migrations and PGlite thread, the viewer's page, dev-core's
// fixture, pino-pretty for observability) is looked up at run time in that module's own package
// folder, found the way its import was resolved: from the service's package, through each workspace
// dependency in turn. The image (`pnpm deploy`) and the workspace lay packages out differently; this
// resolves in both. Third-party packages keep their `__dirname` pointing at the bundle; none of those
// bundled reads a file beside itself on the service's path (pino's transport workers go unused).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';

const packageDir = process.cwd();
const entries = process.argv.slice(2);
if (entries.length === 0) throw new Error('usage: bundle-service.mjs <compiled entry>...');
const workspaceRoot = resolve(dirname(new URL(import.meta.url).pathname), '..');
// esbuild is a development dependency of the workspace root; the built entries need none of it.
const esbuild = createRequire(join(workspaceRoot, 'package.json'))('esbuild');

const readManifest = (dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
const workspaceDependencies = (manifest) => Object.keys(manifest.dependencies ?? {}).filter((name) => name.startsWith('@chat/'));

/**
 * Every workspace package the service reaches through production dependencies: its folder, and the
 * chain of package names by which it is resolved from the service's package (breadth first, so the
 * shortest), with the path of its main export in its folder (how a folder is found from a resolution).
 */
function workspacePackages() {
  const found = new Map([[packageDir, { chain: [], name: readManifest(packageDir).name }]]);
  const queue = [packageDir];
  while (queue.length > 0) {
    const dir = queue.shift();
    const { chain } = found.get(dir);
    const requireFrom = createRequire(join(dir, 'package.json'));
    for (const name of workspaceDependencies(readManifest(dir))) {
      const main = requireFrom.resolve(name);
      const depDir = packageFolderOf(main);
      if (found.has(depDir)) continue;
      found.set(depDir, { chain: [...chain, { name, main: relative(depDir, main) }], name });
      queue.push(depDir);
    }
  }
  return found;
}

function packageFolderOf(file) {
  let dir = dirname(file);
  while (true) {
    try {
      readFileSync(join(dir, 'package.json'));
      return dir;
    } catch {
      const up = dirname(dir);
      if (up === dir) throw new Error(`no package.json above ${file}`);
      dir = up;
    }
  }
}

const packages = workspacePackages();

/** Rewrites `import.meta.url` in a workspace package's module to that module's own run-time URL. */
const moduleUrlPlugin = {
  name: 'workspace-module-url',
  setup(build) {
    build.onLoad({ filter: /\.m?js$/ }, (args) => {
      if (args.path.split(sep).includes('node_modules')) return undefined;
      const source = readFileSync(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      const owner = packages.get(packageFolderOf(args.path));
      if (!owner) throw new Error(`${args.path} is not in a workspace package the service depends on`);
      const url = `__chatModuleUrl(${JSON.stringify(owner.chain)}, ${JSON.stringify(relative(packageFolderOf(args.path), args.path).split(sep).join('/'))})`;
      return { contents: source.replaceAll('import.meta.url', url), loader: 'js' };
    });
  },
};

// Runs first in the bundle: `require`, `__filename` and `__dirname` for the bundled CommonJS
// modules, and the run-time lookup of a workspace module's URL (see the top of this file).
const prelude = (entry) => `
import { createRequire as __chatCreateRequire } from 'node:module';
import { dirname as __chatDirname, join as __chatJoin } from 'node:path';
import { fileURLToPath as __chatFileUrlToPath, pathToFileURL as __chatPathToFileUrl } from 'node:url';
const require = __chatCreateRequire(import.meta.url);
const __filename = __chatFileUrlToPath(import.meta.url);
const __dirname = __chatDirname(__filename);
const __chatServiceDir = __chatJoin(__dirname, ${JSON.stringify(relative(dirname(resolve(packageDir, entry)), packageDir) || '.')});
const __chatPackageDirs = new Map();
function __chatModuleUrl(chain, file) {
  const key = chain.map((step) => step.name).join(' ');
  let dir = __chatPackageDirs.get(key);
  if (dir === undefined) {
    dir = __chatServiceDir;
    for (const step of chain) {
      const main = __chatCreateRequire(__chatJoin(dir, 'package.json')).resolve(step.name);
      dir = main.slice(0, main.length - step.main.length - 1);
    }
    __chatPackageDirs.set(key, dir);
  }
  return __chatPathToFileUrl(__chatJoin(dir, file)).href;
}
`;

for (const entry of entries) {
  await esbuild.build({
    entryPoints: [entry],
    outfile: entry,
    allowOverwrite: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    // The image holds no sources; the map still names each original file and line.
    sourcesContent: false,
    banner: { js: prelude(entry) },
    plugins: [moduleUrlPlugin],
    logLevel: 'warning',
    // Loaded on demand from observability's own folder (pretty logs for a terminal only).
    external: ['pino-pretty'],
  });
}
