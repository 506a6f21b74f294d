import { expect } from 'chai';
import fc from 'fast-check';
import { ulid } from 'ulid';
import type { ApiRequest } from '../harness/api-client.ts';
import { MODES, sharedStack, type Stack } from '../harness/stacks.ts';

const RUNS = 150;

/** Path segments a hostile client might send: valid IDs, near misses, encodings, traversal. */
function segment(valid: string[]) {
  return fc.oneof(
    fc.constantFrom(...valid),
    fc.constantFrom('', '.', '..', '%2e%2e', '%', '%ZZ', '%00', '%C0%AE', '%2F', 'room', 'messages', 'branches', 'ROOM', ';', '*'),
    fc.stringMatching(/^[0-9A-Za-z%._~:@!$&'()*+,;=-]{0,30}$/),
    fc.constantFrom(...valid).map((v) => v.toLowerCase()),
  );
}

/** The viewer's pages, `/` and `/callback`, each with the trailing slash every route allows (so `//` too). */
function servedByViewer(method: string, path: string): boolean {
  return method === 'GET' && /^\/(?:callback)?\/?(?:\?|$)/.test(path);
}

function pathArbitrary(repositoryIds: string[], branchIds: string[]) {
  const repo = segment(repositoryIds);
  const branch = segment(branchIds);
  const query = fc.oneof(
    fc.constant(''),
    fc.constantFrom('?limit=1', '?limit=0', '?limit=abc', '?limit=1&limit=2', '?cursor=', '?cursor=%', '?cursor=AAAA', '?limit=200&cursor=x', '?a[b]=c', '?limit[]=1', '?cursor[x]=1'),
    fc.stringMatching(/^\?[0-9A-Za-z%&=[\]._~-]{0,40}$/),
  );
  const path = fc.oneof(
    fc.tuple(repo).map(([r]) => `/v1/repositories/${r}/room`),
    fc.tuple(repo).map(([r]) => `/v1/repositories/${r}/room/messages`),
    fc.tuple(repo, branch).map(([r, b]) => `/v1/repositories/${r}/branches/${b}/room`),
    fc.tuple(repo, branch).map(([r, b]) => `/v1/repositories/${r}/branches/${b}/room/messages`),
    fc.array(segment([...repositoryIds, 'v1', 'repositories']), { maxLength: 8 }).map((parts) => `/${parts.join('/')}`),
  );
  return fc.tuple(path, query).map(([p, q]) => p + q);
}

function bodyArbitrary(bodyMarkdown: fc.Arbitrary<string>) {
  const mention = fc.record({
    principalKind: fc.oneof(fc.constantFrom('human', 'bot'), fc.string()),
    principalId: fc.oneof(fc.string(), fc.constantFrom('u_alice', 'b_ci')),
    startByte: fc.oneof(fc.integer({ min: -5, max: 40 }), fc.double(), fc.constant(2 ** 40)),
    endByte: fc.oneof(fc.integer({ min: -5, max: 40 }), fc.string()),
  }, { requiredKeys: [] });
  return fc.oneof(
    fc.record({ bodyMarkdown, mentions: fc.array(mention, { maxLength: 4 }) }, { requiredKeys: ['bodyMarkdown'] }).map((b) => JSON.stringify(b)),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.constantFrom('{', '{"bodyMarkdown":"\\ud800"}', '{"bodyMarkdown":"\\u0000"}', '{"__proto__":{"x":1}}', '{"bodyMarkdown":"x","mentions":null}', '{"bodyMarkdown":1e999}'),
  );
}

for (const mode of MODES) {
  describe(`[${mode}] invariant 7: never a 500 (property)`, function () {
    this.timeout(120_000);
    let stack: Stack;
    before(async () => {
      stack = await sharedStack(mode);
    });

    it(`invariant 7: ${RUNS} random junk requests (paths, methods, headers, bodies) get 0 × 5xx and only contract-valid answers`, async () => {
      const { scenario, actors } = await stack.scenario();
      const tokens = [await actors.writer(), await actors.reader(), await actors.appendBot(), await actors.readBot(), await actors.revokedBot(), await actors.coreResource()];
      const printable = fc.stringMatching(/^[\x20-\x7e]{0,60}$/);
      const request = fc.record({
        method: fc.constantFrom('GET', 'POST', 'POST', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
        path: pathArbitrary([scenario.repositoryId, scenario.otherRepositoryId, scenario.archivedRepositoryId, ulid()], [scenario.branchId, scenario.deletedBranchId, scenario.foreignBranchId]),
        authorization: fc.option(fc.oneof(fc.constantFrom(...tokens).map((t) => `Bearer ${t}`), printable, fc.constantFrom(...tokens).map((t) => `Bearer ${t.slice(0, -2)}`)), { nil: undefined }),
        key: fc.option(fc.oneof(fc.constant(ulid()), printable, fc.constant(ulid().toLowerCase())), { nil: undefined }),
        requestId: fc.option(printable, { nil: undefined }),
        coreAuthorization: fc.option(fc.oneof(printable, fc.constantFrom(`Bearer ${tokens[5]}`)), { nil: undefined }),
        contentType: fc.option(fc.constantFrom('application/json', 'application/json; charset=utf-8', 'application/json; charset=latin1', 'text/plain', 'application/merge-patch+json', '*/*', 'application/json, text/plain'), { nil: undefined }),
        contentEncoding: fc.option(fc.constantFrom('gzip', 'identity', 'br', 'x-junk'), { nil: undefined }),
        body: fc.option(bodyArbitrary(fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }), fc.constantFrom('a', 'é', '\u2028', '<script>x</script>'))), { nil: undefined }),
      });
      const failures: string[] = [];
      let count = 0;
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const headers: Record<string, string> = {};
          if (r.authorization !== undefined) headers.authorization = r.authorization;
          if (r.key !== undefined) headers['idempotency-key'] = r.key;
          if (r.requestId !== undefined) headers['x-request-id'] = r.requestId;
          if (r.coreAuthorization !== undefined) headers['x-service-core-authorization'] = r.coreAuthorization;
          if (r.contentType !== undefined) headers['content-type'] = r.contentType;
          if (r.contentEncoding !== undefined) headers['content-encoding'] = r.contentEncoding;
          const req: ApiRequest = { method: r.method, path: r.path, headers, ...(r.body === undefined ? {} : { raw: r.body }) };
          const res = await stack.api.send(req, { validate: false });
          count++;
          // The all-in-one serves the viewer's page at GET / and /callback: not an API answer, so it is
          // held to no 5xx only.
          const problems = servedByViewer(r.method, r.path) ? [] : stack.api.problems(req, res);
          if (res.status >= 500) problems.unshift(`status ${res.status}`);
          if (problems.length > 0) failures.push(`${r.method} ${r.path} ${JSON.stringify(headers).slice(0, 300)} body=${JSON.stringify(r.body)?.slice(0, 200)} → ${res.status} ${res.text.slice(0, 200)}: ${problems.join('; ')}`);
          return problems.length === 0;
        }),
        { numRuns: RUNS, endOnFailure: false },
      ).catch(() => undefined);
      expect(count).to.be.greaterThan(0);
      expect(failures, failures.slice(0, 5).join('\n')).to.deep.equal([]);
    });
  });
}
