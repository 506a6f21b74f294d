/**
 * `pnpm config:docs`: writes the README's configuration table from the env schemas;
 * `pnpm config:docs --check` only compares, and exits 1 when the README differs.
 */
import { renderedReadme, writeConfigDocs } from './config-docs.ts';

if (process.argv.includes('--check')) {
  const { current, rendered } = await renderedReadme();
  process.stdout.write(current === rendered ? 'README.md: configuration table up to date\n' : 'README.md: configuration table differs from the schemas (run pnpm config:docs)\n');
  process.exitCode = current === rendered ? 0 : 1;
} else {
  const changed = await writeConfigDocs();
  process.stdout.write(changed ? 'README.md: configuration table updated\n' : 'README.md: configuration table up to date\n');
}
