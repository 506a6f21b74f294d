/** `pnpm config:docs`: writes the README's configuration table from the env schemas. */
import { writeConfigDocs } from './config-docs.ts';

const changed = await writeConfigDocs();
process.stdout.write(changed ? 'README.md: configuration table updated\n' : 'README.md: configuration table up to date\n');
