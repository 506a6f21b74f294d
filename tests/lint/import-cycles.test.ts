import { expect } from 'chai';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { testConfig } from '../harness/test-config.ts';
import { findImportCycles } from './import-cycles.ts';

async function sourceRoots(): Promise<string[]> {
  const roots: string[] = [];
  for (const group of ['clients', 'libraries', 'services']) {
    for (const name of await readdir(join(testConfig.repoRoot, group))) roots.push(join(testConfig.repoRoot, group, name, 'src'));
  }
  return roots;
}

describe('lint: no import cycles in clients/*/src, libraries/*/src and services/*/src', () => {
  it('finds a cycle when there is one (the finder can fail)', async () => {
    const cycles = await findImportCycles([join(testConfig.repoRoot, 'tests', 'lint', 'cycle-fixture')], testConfig.repoRoot);
    expect(cycles).to.deep.equal([['tests/lint/cycle-fixture/a.ts', 'tests/lint/cycle-fixture/b.ts']]);
  });

  it('finds none in the sources', async () => {
    const cycles = await findImportCycles(await sourceRoots(), testConfig.repoRoot);
    expect(cycles.map((c) => [...c, c[0]].join(' -> '))).to.deep.equal([]);
  });
});
