/** The service API endpoints chat calls, by the name `GET /dev/calls` reports them under. */
export type ServiceEndpointName = 'authorize' | 'authorizeBatch' | 'listRepositories' | 'resolveMentions';

/**
 * How many calls each service endpoint received since start, whatever their answer (faults and
 * refusals included), so a test can show that chat did not ask core at all, without a fake core.
 * The route table names the endpoint of each call.
 */
export class ServiceCallCounts {
  #counts: Record<ServiceEndpointName, number> = { authorize: 0, authorizeBatch: 0, listRepositories: 0, resolveMentions: 0 };

  /** Counts one call to the endpoint `name`. */
  record(name: ServiceEndpointName): void {
    this.#counts[name] += 1;
  }

  get current(): Record<ServiceEndpointName, number> {
    return { ...this.#counts };
  }
}
