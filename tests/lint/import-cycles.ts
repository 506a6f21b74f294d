import { readFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { filesUnder } from './workspace-sources.ts';

/** Relative imports and re-exports of a module (`import type` included: a cycle of types is still a tangle). */
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|(?:^|\n)\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/** The TypeScript modules, declaration files left out. */
const isModule = (name: string) => /\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts');

/**
 * The import cycles among the TypeScript files under `roots`, each as the list of files around it
 * (relative to `base`). Only relative imports count: packages import each other by name, and pnpm
 * refuses cycles between packages' dependencies of its own.
 */
export async function findImportCycles(roots: string[], base: string): Promise<string[][]> {
  const graph = new Map<string, string[]>();
  for (const root of roots) {
    for (const file of await filesUnder(root, isModule)) {
      const text = await readFile(file, 'utf8');
      const targets: string[] = [];
      for (const match of text.matchAll(IMPORT)) targets.push(resolve(dirname(file), (match[1] ?? match[2])!));
      graph.set(file, targets);
    }
  }
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === 'open') cycles.push(stack.slice(stack.indexOf(next)).map((f) => relative(base, f)));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return cycles;
}
