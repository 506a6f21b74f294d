import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintDemoToken } from './demo-token.ts';

/**
 * A person's tokens for trying the bot from another terminal, in files only the owner reads (never
 * printed). They live as long as the bot: the folder is removed when the process exits.
 */
export async function demoInstructions(coreUrl: string, baseUrl: string, repositoryId: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'echo-bot-'));
  // 'exit' runs on every way out the bot takes: the end of main, process.exit, and after a
  // SIGINT or SIGTERM, which runBot turns into a clean stop.
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const human = join(dir, 'alice.token');
  const core = join(dir, 'alice-core.token');
  writeFileSync(human, await mintDemoToken(coreUrl, { type: 'human', subjectId: 'u_alice' }), { mode: 0o600 });
  writeFileSync(core, await mintDemoToken(coreUrl, { type: 'core_resource', subjectId: 'u_alice' }), { mode: 0o600 });
  const flags = `--url ${baseUrl} --repository ${repositoryId} --token-file ${human}`;
  return [
    'try it from another terminal while the bot runs:',
    `  pnpm chat post ${flags} --core-token-file ${core} --mention bot:b_ci 'hello @b_ci'`,
    `  pnpm chat messages ${flags}`,
  ].join('\n');
}
