/** A mistake in how the command was called (exit code 2), as opposed to an answer of the service (exit code 1). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
