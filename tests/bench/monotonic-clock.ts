/**
 * Milliseconds on the system's monotonic clock (CLOCK_MONOTONIC via hrtime). Unlike
 * `performance.now()`, whose origin is per process, it reads the same in every process on the
 * machine, so a writer and a separate client process can subtract each other's readings.
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
