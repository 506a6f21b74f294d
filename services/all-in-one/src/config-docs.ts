/**
 * The README's configuration table, generated from every process's env schema (`pnpm config:docs`
 * writes it; `config-docs.test.ts` fails when the README differs).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ApiEnvSchema } from '@chat/api';
import { DevCoreEnvSchema, TokenEnvSchema } from '@chat/dev-core';
import { IngressErrorsEnvSchema } from '@chat/ingress-errors';
import { NotifierEnvSchema } from '@chat/notifier';
import { renderConfigTable, replaceConfigTable, type ConfigSection } from '@chat/service-config';
import { MigrateEnvSchema } from '@chat/store';
import { GatewayEnvSchema } from '@chat/stream-gateway';
import { ViewerEnvSchema } from '@chat/viewer';
import { AllInOneEnvSchema } from './config.ts';

export const README_PATH = fileURLToPath(new URL('../../../README.md', import.meta.url));

/** Every process that reads the environment, under the name the table's "used by" column gives it. */
export const CONFIG_SECTIONS: ConfigSection[] = [
  { service: 'all-in-one', schema: AllInOneEnvSchema },
  { service: 'api', schema: ApiEnvSchema },
  { service: 'gateway', schema: GatewayEnvSchema },
  { service: 'notifier', schema: NotifierEnvSchema },
  { service: 'dev-core', schema: DevCoreEnvSchema },
  { service: 'dev-token', schema: TokenEnvSchema },
  { service: 'migrate', schema: MigrateEnvSchema },
  { service: 'ingress-errors', schema: IngressErrorsEnvSchema },
  { service: 'viewer', schema: ViewerEnvSchema },
];

/** The README as it should read, with the table rendered from the schemas. */
export async function renderedReadme(): Promise<{ current: string; rendered: string }> {
  const current = await readFile(README_PATH, 'utf8');
  return { current, rendered: replaceConfigTable(current, renderConfigTable(CONFIG_SECTIONS)) };
}

/** Writes the table into the README; answers whether it changed. */
export async function writeConfigDocs(): Promise<boolean> {
  const { current, rendered } = await renderedReadme();
  if (rendered === current) return false;
  await writeFile(README_PATH, rendered);
  return true;
}
