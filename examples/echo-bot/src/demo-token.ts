/** What to ask the development core for (its `POST /dev/tokens` body, without the lifetime). */
export interface DemoTokenRequest {
  type: 'human' | 'bot' | 'core_resource';
  subjectId: string;
  credentialId?: string;
}

/** Lifetime of a minted demo token. The bot mints a fresh one when the service refuses it. */
const LIFETIME_SECONDS = 3600;

/**
 * A token minted by the development core that `pnpm start` embeds (`CHAT_CORE_URL`). Each failure
 * names that URL, so a core on another port, or something else listening there, shows at once.
 */
export async function mintDemoToken(coreUrl: string, request: DemoTokenRequest): Promise<string> {
  let response: Response;
  try {
    response = await fetch(`${coreUrl}/dev/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...request, expiresInSeconds: LIFETIME_SECONDS }),
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
