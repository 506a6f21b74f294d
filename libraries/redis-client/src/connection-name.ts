/**
 * The name a connection shows in Redis's `CLIENT LIST`: the deployment's key prefix, the role and
 * the process (`<prefix>:stream-leases:<pid>`; the backbone adds a count per connection), so an
 * operator can tell whose it is. Whitespace becomes `_`, which Redis refuses in a name.
 */
export function connectionName(keyPrefix: string, role: string): string {
  return `${keyPrefix}:${role}:${process.pid}`.replace(/\s/g, '_');
}
