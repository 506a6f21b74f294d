import { writeFileSync } from 'node:fs';
import { GENERATED_PATH, generateTypes } from './generate-types.ts';

writeFileSync(GENERATED_PATH, await generateTypes());
console.log(`wrote ${GENERATED_PATH.pathname}`);
