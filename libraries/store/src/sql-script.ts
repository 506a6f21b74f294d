/** Reading SQL files into statements, and rows out of either driver's results. */

/** node-postgres returns `{ rows }`, PGlite returns `{ rows }` too; both shapes are read here. */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}

/**
 * Splits a script at semicolons that end a line, outside dollar-quoted bodies (functions): the
 * store's SQL files keep to that layout. Comment lines outside bodies are left out. One statement
 * per call is what PGlite's extended protocol takes.
 */
export function splitStatements(script: string): string[] {
  const statements: string[] = [];
  let current: string[] = [];
  let inBody = false;
  for (const line of script.split('\n')) {
    if (!inBody && /^\s*--/.test(line)) continue;
    current.push(line);
    // Each `$$` opens or closes a body.
    if ((line.match(/\$\$/g)?.length ?? 0) % 2 === 1) inBody = !inBody;
    if (!inBody && /;\s*$/.test(line)) {
      statements.push(current.join('\n').replace(/;\s*$/, '').trim());
      current = [];
    }
  }
  statements.push(current.join('\n').trim());
  return statements.filter((s) => s.length > 0);
}
