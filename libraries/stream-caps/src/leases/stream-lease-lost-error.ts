/**
 * Reported through `onError` when a renewal finds a lease's slot gone: it missed renewals for a
 * whole lease (Redis unreachable, the process stalled) and the slot may have gone to another
 * stream. The registry stops renewing it and frees its other slot; the stream keeps running.
 */
export class StreamLeaseLostError extends Error {
  readonly leaseId: string;

  constructor(leaseId: string) {
    super(`stream lease ${leaseId} expired before it could be renewed`);
    this.name = 'StreamLeaseLostError';
    this.leaseId = leaseId;
  }
}
