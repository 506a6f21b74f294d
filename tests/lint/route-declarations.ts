import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { filesUnder, PACKAGE_GROUPS, packageFolders, repoPath } from './workspace-sources.ts';

/** One place a source declares how a request path is served. */
export interface RouteDeclaration {
  /** The workspace package that declares it: routes are one per package (a service's table). */
  owner: string;
  /** `file:line`. */
  at: string;
  /** GET, POST, … or `*` when the declaration takes any method. */
  method: string;
  /** The path, lowercased, with each parameter or pattern group written `:`. */
  path: string;
}

/** Drops comments, so a path named in prose is no declaration. */
function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** A path written as a template, a literal or a regular expression, in one comparable spelling. */
function normalize(path: string): string {
  return path
    .replace(/\\\//g, '/')
    .replace(/^\^/, '')
    .replace(/\/\?\$?$|\$$/g, '')
    .replace(/\(\?<\w+>[^)]*\)|\([^)]*\)|\[\^\/\]\+|:\w+|\$\{[^}]*\}/g, ':')
    .replace(/\/+$/, '')
    .toLowerCase();
}

/** Where a source declares served paths, each form a way some code here has dispatched requests. */
const FORMS: ReadonlyArray<{ name: string; pattern: RegExp; method: (m: RegExpExecArray) => string; path: (m: RegExpExecArray) => string }> = [
  // A route table's entry: `{ method: 'GET', path: '/v1/…', … }`.
  { name: 'route table entry', pattern: /method:\s*'([A-Z]+)',\s*path:\s*(['`])((?:\/|\$\{)[^'`]*)\2/g, method: (m) => m[1]!, path: (m) => m[3]! },
  // An express-style router or app: `router.get('/path', …)`, `router.route('/path')`, `app.use('/path', …)`.
  { name: 'router method', pattern: /\b(?:router|app|server)\s*\.(get|post|put|patch|delete|head|all|route|use)\(\s*(['`])(\/[^'`]*)\2/gi, method: (m) => (['get', 'post', 'put', 'patch', 'delete', 'head'].includes(m[1]!) ? m[1]!.toUpperCase() : '*'), path: (m) => m[3]! },
  // A listener comparing the request's path: `req.url === '/path'`, `path === '/path'`.
  { name: 'path comparison', pattern: /\b(?:url|pathname|path)\s*===\s*(['`])(\/[^'`]*)\1/g, method: () => '*', path: (m) => m[2]! },
  // A table keyed by path: `{ '/path': handler }`.
  { name: 'path-keyed table', pattern: /^\s*(['`])(\/[a-z][^'`\s]*)\1\s*:/gm, method: () => '*', path: (m) => m[2]! },
  // A pattern over request paths: `/^\/v1\/…/`.
  { name: 'path pattern', pattern: /(?<![\w)\]])\/\^\\\/(?:\\.|\[(?:\\.|[^\]\\\n])*\]|[^/\n\\[])*\//g, method: () => '*', path: (m) => m[0].slice(1, -1) },
];

/** The route declarations of one production source. */
export function routeDeclarations(owner: string, file: string, source: string): RouteDeclaration[] {
  const code = withoutComments(source);
  const lineOf = (index: number) => code.slice(0, index).split('\n').length;
  // `const ROOM = '/v1/…'` lets a template like `${ROOM}/messages` be read as the path it is.
  const constants = new Map<string, string>();
  for (const m of code.matchAll(/\bconst\s+(\w+)\s*=\s*'(\/[^']*)'/g)) constants.set(m[1]!, m[2]!);
  const resolve = (path: string) => path.replace(/\$\{(\w+)\}/g, (whole, name: string) => constants.get(name) ?? whole);
  const found: RouteDeclaration[] = [];
  for (const form of FORMS) {
    for (const m of code.matchAll(form.pattern)) {
      found.push({ owner, at: `${file}:${lineOf(m.index!)}`, method: form.method(m as RegExpExecArray), path: normalize(resolve(form.path(m as RegExpExecArray))) });
    }
  }
  return found;
}

/** Declarations of one package that serve the same method and path from more than one place. */
export function duplicateRoutes(declarations: readonly RouteDeclaration[]): string[] {
  const byPath = new Map<string, RouteDeclaration[]>();
  for (const d of declarations) {
    const key = `${d.owner} ${d.path}`;
    byPath.set(key, [...(byPath.get(key) ?? []), d]);
  }
  const found: string[] = [];
  for (const group of byPath.values()) {
    for (let i = 0; i < group.length; i += 1) {
      for (let j = i + 1; j < group.length; j += 1) {
        const [a, b] = [group[i]!, group[j]!];
        if (a.method === b.method || a.method === '*' || b.method === '*') found.push(`${a.method} ${a.path} is declared at ${a.at} and at ${b.at}`);
      }
    }
  }
  return found;
}

/** Imports of express, its request or response types, or body-parser, in one production source. */
export function expressImports(file: string, source: string): string[] {
  const found: string[] = [];
  withoutComments(source)
    .split('\n')
    .forEach((line, index) => {
      if (/\bfrom\s+['"](?:express|express-serve-static-core|body-parser)['"]|\brequire\(\s*['"]express['"]\s*\)/.test(line)) found.push(`${file}:${index + 1} ${line.trim()}`);
    });
  return found;
}

/** Production sources: TypeScript, tests left out. */
const isProductionSource = (name: string) => /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name);

/**
 * Every production source (`src/`, tests left out) of every workspace package (clients, libraries,
 * services and infra's tools), with its package.
 */
export async function productionSources(repoRoot: string): Promise<Array<{ owner: string; file: string; source: string }>> {
  const sources = [];
  for (const folder of await packageFolders(repoRoot, [...PACKAGE_GROUPS, 'infra'])) {
    const owner = repoPath(repoRoot, folder);
    for (const path of await filesUnder(join(folder, 'src'), isProductionSource)) {
      sources.push({ owner, file: repoPath(repoRoot, path), source: await readFile(path, 'utf8') });
    }
  }
  return sources;
}
