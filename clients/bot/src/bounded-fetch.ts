import { Agent, fetch as undiciFetch } from 'undici';

/**
 * A fetch that keeps at most `connections` connections open per origin, shared by every request and
 * stream of the bot: a bot on a thousand repositories holds its feed stream and a few kept-alive
 * connections for its lookups and replies, not one per handler in flight. Requests beyond them wait
 * for a free connection.
 */
export function connectionBoundedFetch(connections: number): { fetch: typeof globalThis.fetch; close(): Promise<void> } {
  const agent = new Agent({ connections });
  const fetch = ((input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit) =>
    // undici's fetch is the one Node ships; its types differ from the DOM lib's only in name.
    undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher: agent })) as unknown as typeof globalThis.fetch;
  return { fetch, close: () => agent.close() };
}
