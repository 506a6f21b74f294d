import type { OutputLimits } from './domain/sse-output.ts';
import type { SessionSettings } from './domain/stream-session.ts';

/** The process's stream-open rate (`domain/open-rate.ts`). */
export interface OpenRateLimits {
  /** Stream opens admitted per second, on average. */
  opensPerSecond?: number;
  /** Stream opens admitted at once after a quiet spell. */
  openBurst?: number;
}

/** Every tunable of the stream engine; see each field's TSDoc for its default. */
export interface StreamEngineSettings extends SessionSettings, OutputLimits, OpenRateLimits {
  /** Period of the hub's one timer. @defaultValue min(1000, heartbeatMs / 4, recheckMs / 4), at least 10 */
  tickMs?: number;
}

export const DEFAULT_ENGINE_SETTINGS: Readonly<Required<Omit<StreamEngineSettings, 'tickMs'>>> = {
  heartbeatMs: 15_000,
  maxStreamAgeMs: 30 * 60_000,
  recheckMs: 60_000,
  tokenExpiryMarginMs: 5000,
  replayPageSize: 200,
  maxPendingEvents: 1000,
  gapGraceMs: 50,
  maxEvents: 1000,
  maxBytes: 1024 * 1024,
  opensPerSecond: 1000,
  openBurst: 2000,
};

/** Applies defaults; the tick follows the shortest periodic duty so none runs late by more than a quarter. */
export function resolveEngineSettings(partial: Partial<StreamEngineSettings> = {}): Required<StreamEngineSettings> {
  const merged = { ...DEFAULT_ENGINE_SETTINGS, ...stripUndefined(partial) };
  const tickMs = partial.tickMs ?? Math.max(10, Math.min(1000, Math.floor(merged.heartbeatMs / 4), Math.floor(merged.recheckMs / 4)));
  return { ...merged, tickMs };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
