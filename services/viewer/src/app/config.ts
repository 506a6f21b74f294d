import type { ViewerConfig } from '../server/viewer-config.ts';

export type { ViewerConfig, ViewerRoom } from '../server/viewer-config.ts';

/** Reads the deployment's settings, served next to the page. */
export async function loadConfig(): Promise<ViewerConfig> {
  const response = await fetch('/viewer-config.json', { cache: 'no-cache' });
  if (!response.ok) throw new Error(`viewer-config.json answered ${response.status}`);
  return (await response.json()) as ViewerConfig;
}

/** Chat's base URL for the SDK: the configured one, or this page's origin. */
export function chatBaseUrl(config: ViewerConfig): string {
  return config.chatUrl || location.origin;
}

/** The core page of one commit. */
export function commitUrl(config: ViewerConfig, repositoryId: string, sha: string): string {
  return config.commitUrlTemplate.replace('{repositoryId}', encodeURIComponent(repositoryId)).replace('{sha}', sha);
}
