import { expect } from 'chai';
import { renderedReadme } from './config-docs.ts';

describe('README configuration table', () => {
  it('is the one generated from the env schemas (run `pnpm config:docs` after changing a setting)', async () => {
    const { current, rendered } = await renderedReadme();
    expect(current === rendered, 'README.md differs from the schemas: run `pnpm config:docs`').to.equal(true);
  });
});
