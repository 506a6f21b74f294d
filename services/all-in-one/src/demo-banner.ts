import type { DevCoreHandle } from '@chat/dev-core';

/** IDs from dev-core's bundled demo fixture. */
const DEMO_REPOSITORY_ID = '01JGFJJZ00QNYBVPQTAT49MN0F';

/**
 * What a person sees at start: where the service is, and (with the embedded dev-core and its demo
 * fixture) tokens and a command to try. Written to stdout as CLI output, never to the log.
 */
export async function demoBanner(input: { url: string; coreUrl: string; host: string; devCore: DevCoreHandle | undefined }): Promise<string> {
  const lines = [`chat service: ${input.url}`, `core:         ${input.coreUrl}`, `contract:     ${input.url}/v1/openapi.json`, `bound to:     ${boundTo(input.host)}`];
  if (input.devCore) {
    try {
      const human = await input.devCore.mintToken({ type: 'human', subjectId: 'u_alice', expiresInSeconds: 3600 });
      const bot = await input.devCore.mintToken({ type: 'bot', subjectId: 'b_ci', credentialId: 'c_1', expiresInSeconds: 3600 });
      lines.push(
        '',
        'demo tokens (valid 1 hour, also after a restart on this DATA_DIR; new ones: pnpm dev-token user|bot):',
        `  human u_alice: ${human}`,
        `  bot b_ci:      ${bot}`,
        '',
        'try:',
        `  curl -H "Authorization: Bearer $TOKEN" ${input.url}/v1/repositories/${DEMO_REPOSITORY_ID}/room/messages`,
      );
    } catch {
      lines.push('', '(the fixture has no demo users; mint tokens with pnpm dev-token user|bot ID, or POST ' + input.coreUrl + '/dev/tokens)');
    }
  }
  lines.push('', `viewer: open ${input.url}`);
  return lines.join('\n') + '\n';
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

/** Where the chat port answers, and how to change it. */
function boundTo(host: string): string {
  return LOOPBACK.has(host) ? `${host}, this machine only (HOST=0.0.0.0 serves other machines too)` : `${host} (HOST): other machines can reach it`;
}
