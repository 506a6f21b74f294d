/** `['k1', 'v1', 'k2', 'v2']` → record; Redis replies to XINFO and XREAD fields come flat like this. */
export function flatToRecord(flat: unknown): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  if (!Array.isArray(flat)) return record;
  for (let i = 0; i + 1 < flat.length; i += 2) record[String(flat[i])] = flat[i + 1];
  return record;
}
