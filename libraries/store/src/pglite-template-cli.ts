/** `node dist/pglite-template-cli.js`, run by the store's build: writes dist/pglite-template.tar.gz. */
import { writePgliteTemplate } from './pglite-template.ts';
import { PGLITE_TEMPLATE_FILE } from './pglite-thread.ts';

const { migrations, functions, bytes } = await writePgliteTemplate(PGLITE_TEMPLATE_FILE);
process.stdout.write(
  `PGlite template: ${PGLITE_TEMPLATE_FILE} (${Math.round(bytes / 1024)} KiB, migrations ${migrations.join(', ')}, functions ${functions.join(', ')})\n`,
);
