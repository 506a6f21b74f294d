/** `ms` spread uniformly over ±`fraction` of itself, so timers of many streams do not fire together. */
export function jittered(ms: number, fraction: number, random: () => number = Math.random): number {
  return Math.max(1, Math.round(ms * (1 - fraction + 2 * fraction * random())));
}
