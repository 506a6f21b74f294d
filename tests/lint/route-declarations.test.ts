import { expect } from 'chai';
import { testConfig } from '../harness/test-config.ts';
import { duplicateRoutes, expressImports, productionSources, routeDeclarations } from './route-declarations.ts';

describe('lint: each route is declared once, in its service’s route table', () => {
  it('finds a route declared twice, in any of the ways requests have been dispatched (the check can fail)', () => {
    const table = [
      "const ROOM = '/v1/repositories/:repositoryId/room';",
      "export const routes = [{ method: 'POST', path: `${ROOM}/messages`, access: 'write', handle }];",
    ].join('\n');
    const router = "router.route('/v1/repositories/:repositoryId/room/messages').post(handler);";
    const listener = "if (req.url === '/v1/openapi.json') serve(req, res);";
    const keyed = "const PLAIN = {\n  '/v1/openapi.json': serveDocument,\n};";
    const pattern = 'const APPEND = /^\\/v1\\/repositories\\/(?<repositoryId>[0-9A-Za-z]+)\\/room\\/messages\\/?$/;';
    const declarations = [
      ...routeDeclarations('services/api', 'api-routes.ts', table),
      ...routeDeclarations('services/api', 'rooms.routes.ts', router),
      ...routeDeclarations('services/api', 'listener.ts', listener),
      ...routeDeclarations('services/api', 'plain.ts', keyed),
      ...routeDeclarations('services/api', 'append-listener.ts', pattern),
      // Another service may serve the same path: each service has its own table.
      ...routeDeclarations('services/stream-gateway', 'gateway-routes.ts', "[{ method: 'GET', path: '/v1/openapi.json', access: 'public', handle }]"),
    ];
    expect(duplicateRoutes(declarations)).to.have.members([
      'POST /v1/repositories/:/room/messages is declared at api-routes.ts:2 and at rooms.routes.ts:1',
      'POST /v1/repositories/:/room/messages is declared at api-routes.ts:2 and at append-listener.ts:1',
      '* /v1/repositories/:/room/messages is declared at rooms.routes.ts:1 and at append-listener.ts:1',
      '* /v1/openapi.json is declared at listener.ts:1 and at plain.ts:2',
    ]);
  });

  it('leaves a path named in a comment, a map lookup, a call to another service, and two methods of one path alone', () => {
    const source = [
      '/** Serves `/v1/openapi.json`. */',
      "const file = bundle.get('/assets/app.js');",
      "const url = new URL(`${base}/internal/v1/authorize`);",
      "const routes = [{ method: 'GET', path: '/v1/things/:id', access: 'public', handle }, { method: 'POST', path: '/v1/things/:id', access: 'public', handle }];",
    ].join('\n');
    expect(duplicateRoutes(routeDeclarations('services/x', 'x.ts', source))).to.deep.equal([]);
  });

  it('finds no route declared twice in the production sources', async () => {
    const declarations = (await productionSources(testConfig.repoRoot)).flatMap(({ owner, file, source }) => routeDeclarations(owner, file, source));
    // The route tables are found at all: a lint that reads nothing would pass too.
    expect(declarations.filter((d) => d.owner === 'services/api' && d.method !== '*').length).to.be.at.least(5);
    expect(duplicateRoutes(declarations)).to.deep.equal([]);
  });
});

describe('lint: no express request or response outside the route pipeline', () => {
  it('finds an import of express, its types, or body-parser (the check can fail)', () => {
    const source = ["import type { Request, Response } from 'express';", "import express from 'express';", "import type { Locals } from 'express-serve-static-core';", "// from 'express'"].join('\n');
    expect(expressImports('x.ts', source)).to.have.length(3);
  });

  it('finds none in the production sources: every service serves its routes through the pipeline', async () => {
    const found = (await productionSources(testConfig.repoRoot)).flatMap(({ file, source }) => expressImports(file, source));
    expect(found).to.deep.equal([]);
  });
});
