/** How core's service endpoints (`/internal/v1/*`) behave; JWKS and `/dev/*` are never affected. */
export interface FaultSettings {
  authorization: 'ok' | 'unavailable' | 'slow';
  /** Delay before answering in `slow` mode. @defaultValue 5000 */
  latencyMs: number;
}

export const DEFAULT_SLOW_LATENCY_MS = 5000;

/** The fault dev-core currently plays, switched live by `POST /dev/faults`. */
export class FaultState {
  #settings: FaultSettings = { authorization: 'ok', latencyMs: DEFAULT_SLOW_LATENCY_MS };

  get current(): FaultSettings {
    return { ...this.#settings };
  }

  set(settings: { authorization: FaultSettings['authorization']; latencyMs?: number | undefined }): FaultSettings {
    this.#settings = {
      authorization: settings.authorization,
      latencyMs: settings.latencyMs ?? DEFAULT_SLOW_LATENCY_MS,
    };
    return this.current;
  }
}
