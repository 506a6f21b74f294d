/**
 * Bundles the browser app into `dist/`: one minified module and one stylesheet under `assets/`,
 * named by content hash (served as immutable), and `index.html` pointing at them.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
mkdirSync(join(dist, 'assets'), { recursive: true });

const result = await build({
  entryPoints: { app: join(root, 'src/app/main.tsx'), styles: join(root, 'src/app/styles.css') },
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: join(dist, 'assets'),
  entryNames: '[name]-[hash]',
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
});

const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
const js = outputs.find((name) => name.startsWith('app-') && name.endsWith('.js'));
const css = outputs.find((name) => name.startsWith('styles-') && name.endsWith('.css'));
if (!js || !css) throw new Error(`unexpected bundle outputs: ${outputs.join(', ')}`);
const html = readFileSync(join(root, 'src/app/index.html'), 'utf8').replace('{{js}}', js).replace('{{css}}', css);
writeFileSync(join(dist, 'index.html'), html);
writeFileSync(join(dist, 'meta.json'), JSON.stringify(result.metafile));
