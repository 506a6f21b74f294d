import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { checkSourceLayout, DOCKERIGNORE_TEST_LINES, missingDockerignoreLines } from './source-layout.ts';
import { testConfig } from '../harness/test-config.ts';

/** Writes `files` (path relative to `root` → content) and returns `root`. */
async function tree(root: string, files: Record<string, string>): Promise<string> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
  return root;
}

describe('source layout: no test code under a package\'s src/', () => {
  let scratch: string;
  beforeEach(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'source-layout-'));
  });
  afterEach(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('holds for the repository', async () => {
    expect(await checkSourceLayout(testConfig.repoRoot)).to.deep.equal([]);
  });

  it('keeps every package\'s test folders out of the image (.dockerignore)', async () => {
    expect(await missingDockerignoreLines(testConfig.repoRoot)).to.deep.equal([]);
  });

  it('accepts tests beside the code importing the test folder, and production code importing production code', async () => {
    const root = await tree(scratch, {
      'libraries/a/src/thing.ts': "import { other } from './other.ts';\nexport const thing = other;\n",
      'libraries/a/src/other.ts': 'export const other = 1;\n',
      'libraries/a/src/thing.test.ts': "import { helper } from '../test/helper.ts';\nimport { thing } from './thing.ts';\n",
      'libraries/a/test/helper.ts': "import { thing } from '../src/thing.ts';\nexport const helper = thing;\n",
      'services/dev-core/src/fixtures/demo-fixture.json': '{}\n',
    });
    expect(await checkSourceLayout(root)).to.deep.equal([]);
  });

  it('refuses test folders and fixture files under src/', async () => {
    const root = await tree(scratch, {
      'libraries/a/src/test-support/h.ts': 'export const h = 1;\n',
      'libraries/b/src/testing/contract.ts': 'export const c = 1;\n',
      'services/c/src/domain/fixtures/vectors.ts': 'export const v = [];\n',
      'libraries/d/src/cases.fixture.ts': 'export const cases = [];\n',
    });
    expect((await checkSourceLayout(root)).map((i) => i.file)).to.deep.equal([
      'libraries/a/src/test-support',
      'libraries/b/src/testing',
      'libraries/d/src/cases.fixture.ts',
      'services/c/src/domain/fixtures',
    ]);
  });

  it('refuses production code that imports test code, however it is reached', async () => {
    const root = await tree(scratch, {
      'libraries/a/src/uses-test-folder.ts': "import { helper } from '../test/helper.ts';\n",
      'libraries/a/src/deep/re-exports.ts': "export { helper } from '../../test/helper.ts';\n",
      'libraries/a/src/dynamic.ts': "export const load = () => import('../test/helper.ts');\n",
      'libraries/a/src/uses-fixture.ts': "import cases from '../test/cases.fixture.ts';\n",
      'libraries/a/src/uses-e2e.ts': "import { x } from '../../../tests/harness/x.ts';\n",
      'libraries/a/src/uses-other-package.ts': "import { contract } from '@chat/backbone/testing';\n",
      'libraries/a/src/uses-a-test.ts': "import { t } from './thing.test.ts';\n",
      'libraries/a/test/helper.ts': 'export const helper = 1;\n',
    });
    const issues = await checkSourceLayout(root);
    expect(issues.map((i) => i.file)).to.deep.equal([
      'libraries/a/src/deep/re-exports.ts',
      'libraries/a/src/dynamic.ts',
      'libraries/a/src/uses-a-test.ts',
      'libraries/a/src/uses-e2e.ts',
      'libraries/a/src/uses-fixture.ts',
      'libraries/a/src/uses-other-package.ts',
      'libraries/a/src/uses-test-folder.ts',
    ]);
    expect(issues[0]!.problem).to.equal("production code imports test code: '../../test/helper.ts'");
  });

  it('names the .dockerignore lines that are missing', async () => {
    const root = await tree(scratch, { '.dockerignore': 'tests\ninfra\nlibraries/*/test\n' });
    expect(await missingDockerignoreLines(root)).to.deep.equal(DOCKERIGNORE_TEST_LINES.filter((l) => l !== 'libraries/*/test'));
  });
});
