/**
 * Viewer commit links (spec section 1 rule 6, section 8): 7–40 character hexadecimal candidates in
 * the prose of sanitized message HTML (never inside code, pre or an existing link) become links to
 * a core commit, after the message is on screen, and only when core knows the commit.
 */

/** A candidate stands alone: no letter, digit or underscore right before or after it. */
const CANDIDATE = /(?<![0-9A-Za-z_])[0-9a-fA-F]{7,40}(?![0-9A-Za-z_])/g;
/** The core look-up takes at most this many values per call. */
export const LOOKUP_BATCH_MAX = 100;
const EXCLUDED = 'code, pre, a, kbd, samp';

/** Text nodes of prose under `root` holding at least one candidate. */
function proseTextNodes(root: Element): Text[] {
  const nodes: Text[] = [];
  const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node as Text;
    const excluded = text.parentElement?.closest(EXCLUDED);
    if (excluded && root.contains(excluded)) continue;
    CANDIDATE.lastIndex = 0;
    if (CANDIDATE.test(text.data)) nodes.push(text);
  }
  return nodes;
}

/** The distinct candidates in the prose under `root`, as written. */
export function commitCandidates(root: Element): string[] {
  const values = new Set<string>();
  for (const node of proseTextNodes(root)) for (const match of node.data.matchAll(CANDIDATE)) values.add(match[0]);
  return [...values];
}

/** Turns the known candidates under `root` into links; `shaOf` answers the full ID or undefined. */
export function linkCommits(root: Element, shaOf: (candidate: string) => string | undefined, href: (sha: string) => string): number {
  let linked = 0;
  for (const node of proseTextNodes(root)) {
    const parts: (string | Node)[] = [];
    let last = 0;
    for (const match of node.data.matchAll(CANDIDATE)) {
      const sha = shaOf(match[0]);
      if (!sha) continue;
      const link = root.ownerDocument.createElement('a');
      link.href = href(sha);
      link.textContent = match[0];
      link.className = 'commit-link';
      link.rel = 'noopener noreferrer';
      link.title = `commit ${sha}`;
      parts.push(node.data.slice(last, match.index), link);
      last = match.index + match[0].length;
      linked++;
    }
    if (last === 0) continue;
    parts.push(node.data.slice(last));
    node.replaceWith(...parts);
  }
  return linked;
}

type Lookup = (candidates: string[]) => Promise<{ candidate: string; sha: string | null }[]>;

/**
 * Resolves candidates against core for one repository: values asked for at about the same time go
 * out together, in calls of at most {@link LOOKUP_BATCH_MAX} unique values, and each value is asked
 * once (an unknown or ambiguous one is remembered as such).
 */
export class CommitResolver {
  private readonly known = new Map<string, string | null>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private queued = new Set<string>();
  private flushing: Promise<void> | undefined;

  constructor(private readonly lookup: Lookup) {}

  /** The full commit ID of a resolved candidate. */
  shaOf = (candidate: string): string | undefined => this.known.get(candidate.toLowerCase()) ?? undefined;

  /** Resolves every value (from cache, a call in flight, or the next batch). */
  async resolve(candidates: string[]): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const raw of candidates) {
      const value = raw.toLowerCase();
      if (this.known.has(value)) continue;
      const pending = this.inFlight.get(value);
      if (pending) waits.push(pending);
      else this.queued.add(value);
    }
    if (this.queued.size > 0) waits.push((this.flushing ??= this.flushSoon()));
    await Promise.all(waits);
  }

  private async flushSoon(): Promise<void> {
    // One macrotask lets every message rendered in the same pass join the batch.
    await new Promise((resolve) => setTimeout(resolve, 0));
    this.flushing = undefined;
    const values = [...this.queued];
    this.queued = new Set();
    const calls: Promise<void>[] = [];
    for (let i = 0; i < values.length; i += LOOKUP_BATCH_MAX) {
      const batch = values.slice(i, i + LOOKUP_BATCH_MAX);
      const call = this.lookup(batch).then(
        (results) => {
          for (const { candidate, sha } of results) this.known.set(candidate.toLowerCase(), sha);
        },
        // A failed look-up links nothing and may be asked again by a later message.
        () => undefined,
      ).finally(() => {
        for (const value of batch) this.inFlight.delete(value);
      });
      for (const value of batch) this.inFlight.set(value, call);
      calls.push(call);
    }
    await Promise.all(calls);
  }
}

/** The core look-up (`POST /api/repositories/{id}/commits/lookup`) with the core resource token. */
export function coreCommitLookup(coreUrl: string, repositoryId: string, coreAccessToken: string): Lookup {
  return async (candidates) => {
    const response = await fetch(new URL(`/api/repositories/${encodeURIComponent(repositoryId)}/commits/lookup`, coreUrl), {
      method: 'POST',
      headers: { Authorization: `Bearer ${coreAccessToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ candidates }),
      credentials: 'omit',
    });
    if (!response.ok) throw new Error(`commit look-up answered ${response.status}`);
    return ((await response.json()) as { results: { candidate: string; sha: string | null }[] }).results;
  };
}
