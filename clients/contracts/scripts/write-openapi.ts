// CLI: regenerates the committed openapi.json from the zod schemas.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument, serializeOpenApiDocument } from '../src/openapi-document.ts';

const target = fileURLToPath(new URL('../openapi.json', import.meta.url));
writeFileSync(target, serializeOpenApiDocument(buildOpenApiDocument()));
console.log(`wrote ${target}`);
