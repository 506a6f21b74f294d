/** The service API endpoints chat calls, by the name `GET /dev/calls` reports them under. */
export const SERVICE_ENDPOINTS = {
  '/internal/v1/authorize': 'authorize',
  '/internal/v1/authorize/batch': 'authorizeBatch',
  '/internal/v1/mentions/resolve': 'resolveMentions',
} as const;

export type ServiceEndpointName = (typeof SERVICE_ENDPOINTS)[keyof typeof SERVICE_ENDPOINTS];

/**
 * How many calls each service endpoint received since start, whatever their answer (faults and
 * refusals included), so a test can show that chat did not ask core at all, without a fake core.
 */
export class ServiceCallCounts {
  #counts: Record<ServiceEndpointName, number> = { authorize: 0, authorizeBatch: 0, resolveMentions: 0 };

  /** Counts one request to `path` (its query ignored); other paths are not service endpoints. */
  record(path: string): void {
    const name = (SERVICE_ENDPOINTS as Record<string, ServiceEndpointName | undefined>)[path.split('?', 1)[0]!];
    if (name !== undefined) this.#counts[name] += 1;
  }

  get current(): Record<ServiceEndpointName, number> {
    return { ...this.#counts };
  }
}
