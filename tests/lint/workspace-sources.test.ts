import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { filesUnder, packageFolders, repoPath, walkTree } from './workspace-sources.ts';

describe('lint: the workspace walker every lint reads through', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'workspace-sources-'));
    for (const path of ['libraries/b/src/z.ts', 'libraries/b/src/deep/a.ts', 'libraries/b/src/node_modules/x/index.ts', 'libraries/b/src/dist/out.js', 'libraries/a/src/skipped/c.ts', 'libraries/a/src/c.test.ts', 'libraries/README.md']) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), '');
    }
  });
  after(() => rm(root, { recursive: true, force: true }));

  it('lists each package folder of the groups, in name order, and nothing for a missing group', async () => {
    expect((await packageFolders(root)).map((f) => repoPath(root, f))).to.deep.equal(['libraries/a', 'libraries/b']);
  });

  it('walks depth first in name order, a folder before what it holds, leaving out node_modules and dist', async () => {
    const entries = [];
    for await (const { path, folder } of walkTree(join(root, 'libraries/b'))) entries.push(`${repoPath(root, path)}${folder ? '/' : ''}`);
    expect(entries).to.deep.equal(['libraries/b/src/', 'libraries/b/src/deep/', 'libraries/b/src/deep/a.ts', 'libraries/b/src/z.ts']);
  });

  it('keeps the files whose names are taken, leaves out skipped paths, and finds none under a missing folder', async () => {
    const files = await filesUnder(join(root, 'libraries/a'), (name) => !name.includes('.test.'), (path) => path.endsWith('skipped'));
    expect(files).to.deep.equal([]);
    expect((await filesUnder(join(root, 'libraries'), (name) => name.endsWith('.ts'))).map((f) => repoPath(root, f))).to.deep.equal([
      'libraries/a/src/c.test.ts',
      'libraries/a/src/skipped/c.ts',
      'libraries/b/src/deep/a.ts',
      'libraries/b/src/z.ts',
    ]);
    expect(await filesUnder(join(root, 'nowhere'), () => true)).to.deep.equal([]);
  });
});
