/** A configured room, listed when core's list of the person's repositories cannot be read. */
export interface ViewerRoom {
  repositoryId: string;
  branchId?: string;
  /** What the room list shows, e.g. a repository or branch name. */
  label: string;
}

/**
 * What the page learns at start from `/viewer-config.json`: where chat and core are and how it is
 * registered at core as a marketplace app. The page holds no other configuration, so one bundle
 * serves every deployment.
 */
export interface ViewerConfig {
  /** Chat's base URL; empty means the page's own origin. */
  chatUrl: string;
  /** Core's public base URL: the handoff bridge, the token exchange and the commit look-up. */
  coreUrl: string;
  /** The viewer's marketplace `client_id` at core. */
  clientId: string;
  /** The exact callback registered for `clientId` (its origin is the viewer's origin). */
  redirectUri: string;
  /** A commit page at core, with `{repositoryId}` and `{sha}` filled in by the page. */
  commitUrlTemplate: string;
  /** Rooms listed when core's list (the repositories the person reads) cannot be read. */
  rooms: ViewerRoom[];
}

/** The usual commit page address under core's base URL. */
export function defaultCommitUrlTemplate(coreUrl: string): string {
  return `${coreUrl.replace(/\/+$/, '')}/repositories/{repositoryId}/commits/{sha}`;
}
