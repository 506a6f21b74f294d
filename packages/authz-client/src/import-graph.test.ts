import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const SOURCE_ROOT = dirname(fileURLToPath(import.meta.url));

/** Every non-test source file of the package, as absolute paths. */
async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : Promise.resolve(e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [join(dir, e.name)] : []))),
  );
  return nested.flat();
}

/** The package-relative modules a file imports or re-exports (type-only imports included: they still tie the files together). */
function relativeImports(file: string, text: string): string[] {
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+'(\.[^']+)'/g), ...text.matchAll(/(?:^|\n)\s*import\s+'(\.[^']+)'/g)];
  return specifiers.map((m) => resolve(dirname(file), m[1]!));
}

describe('authz-client module graph', () => {
  it('has no import cycle', async () => {
    const files = await sourceFiles(SOURCE_ROOT);
    const graph = new Map<string, string[]>();
    for (const file of files) graph.set(file, relativeImports(file, await readFile(file, 'utf8')).filter((f) => files.includes(f)));
    expect(graph.size).to.be.greaterThan(5);
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(SOURCE_ROOT, f)).join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    expect(cycles).to.deep.equal([]);
  });
});
