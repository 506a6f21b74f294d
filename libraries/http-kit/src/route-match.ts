import type { Route, RouteTable } from './route.ts';

/** A route with its table and its compiled path pattern. */
export interface CompiledRoute {
  route: Route;
  table: RouteTable;
  pattern: RegExp;
  /** The parameter names, in the order of the pattern's groups. */
  names: string[];
}

/** What a request's method and path find in the tables. */
export type RouteLookup =
  | { kind: 'route'; compiled: CompiledRoute; rawParams: string[]; query: string }
  /** The path exists with other methods: 405 with `Allow`. */
  | { kind: 'method-not-allowed'; allow: string; template: string }
  | { kind: 'none' };

/**
 * A template's pattern, matched as express's router matches by default: a parameter is one
 * non-empty segment, literals match whatever their case, and a trailing slash is allowed.
 */
function compile(path: string): { pattern: RegExp; names: string[] } {
  const names: string[] = [];
  const source = path
    .split('/')
    .map((segment) => {
      if (!segment.startsWith(':')) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(segment.slice(1));
      return '([^/]+)';
    })
    .join('/');
  return { pattern: new RegExp(`^${source}/?$`, 'i'), names };
}

/**
 * The routes of every table of a process, looked up by method and path. A method and template
 * declared twice, in one table or across two, is refused when the process starts: each route has
 * exactly one declaration.
 */
export class RouteMatcher {
  readonly #routes: CompiledRoute[] = [];
  /** The routes of each method, in declaration order: a request tries only its own method's. */
  readonly #byMethod = new Map<string, CompiledRoute[]>();

  constructor(tables: readonly RouteTable[]) {
    const seen = new Map<string, string>();
    for (const table of tables) {
      for (const route of table.routes) {
        const key = `${route.method} ${route.path.toLowerCase()}`;
        const other = seen.get(key);
        if (other !== undefined) throw new Error(`${route.method} ${route.path} is declared by ${other} and by ${table.service}: a route has one declaration`);
        seen.set(key, table.service);
        const compiled = { route, table, ...compile(route.path) };
        this.#routes.push(compiled);
        this.#byMethod.set(route.method, [...(this.#byMethod.get(route.method) ?? []), compiled]);
      }
    }
  }

  /** Every route, in declaration order. */
  get routes(): readonly CompiledRoute[] {
    return this.#routes;
  }

  /** The route for `method` and `url` (a request target: path and optional query). HEAD finds GET routes. */
  lookup(method: string, url: string): RouteLookup {
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    for (const compiled of this.#byMethod.get(method === 'HEAD' ? 'GET' : method) ?? []) {
      const m = compiled.pattern.exec(pathname);
      if (m) return { kind: 'route', compiled, rawParams: m.slice(1), query: q === -1 ? '' : url.slice(q + 1) };
    }
    // Not found for this method: the path may still exist with others (405).
    const allow = this.#routes.filter((compiled) => compiled.pattern.test(pathname));
    return allow.length > 0 ? { kind: 'method-not-allowed', allow: allow.map((c) => c.route.method).join(', '), template: allow[0]!.route.path } : { kind: 'none' };
  }
}
