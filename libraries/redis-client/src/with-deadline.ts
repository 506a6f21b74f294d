/**
 * Races `work` against a deadline of `ms`: rejects when it passes, after calling `onTimeout` (the
 * place to drop a connection whose silent socket would keep later commands queued behind it).
 * `work` settling after the deadline is ignored, a late rejection included.
 *
 * One promise and one timer per call, without `Promise.race` or an async frame: it guards every
 * backbone command, and this form costs about half as much CPU.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, onTimeout?: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      onTimeout?.();
      reject(new Error(`redis did not answer within ${ms} ms`));
    }, ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
