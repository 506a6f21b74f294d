/** Lifetime of a minted demo token. The bot mints a fresh one when the service refuses it. */
const LIFETIME_SECONDS = 3600;

/**
 * A token for the demo bot b_ci, minted by the development core that `pnpm start` embeds
 * (`CHAT_CORE_URL`). Each failure names that URL, so a core on another port shows at once.
 */
export async function mintDemoBotToken(coreUrl: string): Promise<string> {
  let response: Response;
  try {
    response = await fetch(`${coreUrl}/dev/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'bot', subjectId: 'b_ci', credentialId: 'c_1', expiresInSeconds: LIFETIME_SECONDS }),
    });
  } catch {
    throw new Error(`no development core answers at CHAT_CORE_URL=${coreUrl}: start the service with \`pnpm start\`, set CHAT_CORE_URL to its core, or give a token (CHAT_TOKEN_FILE or CHAT_TOKEN)`);
  }
  const body = (await response.json().catch(() => undefined)) as { token?: unknown } | undefined;
  if (!response.ok || typeof body?.token !== 'string') {
    throw new Error(`CHAT_CORE_URL=${coreUrl} did not mint a demo token (HTTP ${response.status}): is it the development core of \`pnpm start\`?`);
  }
  return body.token;
}
