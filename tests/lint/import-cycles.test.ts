import { expect } from 'chai';
import { join } from 'node:path';
import { testConfig } from '../harness/test-config.ts';
import { findImportCycles } from './import-cycles.ts';
import { packageFolders } from './workspace-sources.ts';

const sourceRoots = async () => (await packageFolders(testConfig.repoRoot)).map((folder) => join(folder, 'src'));

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
