import { z } from 'zod';

/** At most this many candidates per look-up (spec section 8, "Viewer commit links"). */
export const MAX_COMMIT_CANDIDATES = 100;

/** The scope a core resource token needs for the commit look-up. */
export const COMMIT_READ_SCOPE = 'core:commits:read';

/** Body of `POST /api/repositories/{repositoryId}/commits/lookup`. */
export const commitLookupBodySchema = z.object({
  candidates: z
    .array(z.string().regex(/^[0-9a-fA-F]{7,40}$/, 'must be 7 to 40 hexadecimal characters'))
    .min(1)
    .max(MAX_COMMIT_CANDIDATES),
});

export interface CommitLookupResult {
  /** The candidate as sent. */
  candidate: string;
  /** The full commit ID it names, or null when no commit or more than one commit starts with it. */
  sha: string | null;
}

/**
 * Resolves hexadecimal candidates against a repository's commits, case-insensitively. A candidate
 * names a commit when exactly one commit ID starts with it; an ambiguous abbreviation resolves to
 * nothing, as `git rev-parse` refuses it, so a link never points at a guess.
 */
export function lookUpCommits(commits: readonly string[], candidates: readonly string[]): CommitLookupResult[] {
  return candidates.map((candidate) => {
    const prefix = candidate.toLowerCase();
    let found: string | null = null;
    for (const sha of commits) {
      if (!sha.startsWith(prefix)) continue;
      if (found !== null && found !== sha) return { candidate, sha: null };
      found = sha;
    }
    return { candidate, sha: found };
  });
}
