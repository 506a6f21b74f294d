import { readFileSync } from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';

/** The committed contract this SDK's types are generated from. */
const OPENAPI_PATH = new URL('../../contracts/openapi.json', import.meta.url);

/** Where the generated types are committed. */
export const GENERATED_PATH = new URL('../src/generated/openapi.ts', import.meta.url);

const HEADER = [
  '/**',
  ' * Types generated from clients/contracts/openapi.json by openapi-typescript.',
  ' * Do not edit: run `pnpm --filter @chat/client types:generate` and commit the result.',
  ' */',
  '',
].join('\n');

/** Generates the TypeScript text for the committed OpenAPI document, exactly as it is committed. */
export async function generateTypes(): Promise<string> {
  const document = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')) as Parameters<typeof openapiTS>[0];
  const ast = await openapiTS(document, { alphabetize: true });
  return HEADER + astToString(ast);
}
