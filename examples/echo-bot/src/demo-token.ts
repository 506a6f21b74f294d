/**
 * A token for the echo bot when CHAT_TOKEN is not set: minted by the development core that
 * `pnpm start` embeds, for its demo bot `b_ci` (credential `c_1`, granted on the demo repository).
 */
export async function mintDemoToken(coreUrl: string, request: { type: string; subjectId: string; credentialId?: string }): Promise<string> {
  let response: Response;
  try {
    response = await fetch(`${coreUrl}/dev/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...request, expiresInSeconds: 3600 }),
    });
  } catch {
    throw new Error(`no CHAT_TOKEN and no development core at ${coreUrl}: start the service with \`pnpm start\` first, or set CHAT_TOKEN`);
  }
  if (!response.ok) throw new Error(`the development core at ${coreUrl} refused a demo token (${response.status})`);
  return ((await response.json()) as { token: string }).token;
}
