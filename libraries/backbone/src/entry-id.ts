/** Stream entry ids (`<ms>-<n>`), ordered numerically as Redis orders them. */

interface EntryIdParts {
  ms: number;
  n: number;
}

export function parseEntryId(id: string): EntryIdParts {
  const dash = id.indexOf('-');
  const ms = Number(dash < 0 ? id : id.slice(0, dash));
  const n = dash < 0 ? 0 : Number(id.slice(dash + 1));
  if (!Number.isSafeInteger(ms) || !Number.isSafeInteger(n) || ms < 0 || n < 0) {
    throw new Error(`not a stream entry id: ${id}`);
  }
  return { ms, n };
}

export function formatEntryId(parts: EntryIdParts): string {
  return `${parts.ms}-${parts.n}`;
}

export function compareEntryIds(a: string, b: string): number {
  const pa = parseEntryId(a);
  const pb = parseEntryId(b);
  return pa.ms - pb.ms || pa.n - pb.n;
}

export function minEntryId(a: string, b: string): string {
  return compareEntryIds(a, b) <= 0 ? a : b;
}

/** The smallest id an entry added at `epochMs` can have. */
export function entryIdAt(epochMs: number): string {
  return `${Math.max(0, Math.floor(epochMs))}-0`;
}
