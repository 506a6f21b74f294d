import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { formatIssue, type ManifestDocument } from './issue.ts';
import { PROXY_REFUSALS, quantityBytes } from './ingress-refusal-rules.ts';
import { serviceStatuses, specOperations } from './spec-operations.ts';
import { committedDocuments, REPO_ROOT, withChange } from './test-support.ts';
import { validateDocuments, validateManifestDirectory } from './validate-manifests.ts';

const messages = (docs: ManifestDocument[]) => validateDocuments(docs, REPO_ROOT).map(formatIssue);
const BEFORE = fileURLToPath(new URL('../fixtures/k8s-before', import.meta.url));
type Override = { match: { statusCodes: Array<{ value: number }> }; source?: string; response: Record<string, any> };
const overrides = (p: Record<string, any>): Override[] => p.spec.responseOverride;
const STREAMS = 'ingress-routes.yaml HTTPRoute/repo-chat-streams: BackendTrafficPolicy repo-chat-streams';
const API = 'ingress-routes.yaml HTTPRoute/repo-chat-api: BackendTrafficPolicy repo-chat-requests';

describe('proxy refusals rule', () => {
  let docs: ManifestDocument[];
  before(async () => {
    docs = await committedDocuments();
  });

  it('passes the committed routes: every refusal of the proxy is answered in the envelope', () => {
    expect(messages(docs).filter((m) => m.includes('ingress-routes.yaml'))).to.deep.equal([]);
  });

  it('fails on the manifests before it: no HTTPRoute serves the operations, so nothing envelopes the proxy\'s refusals', async () => {
    const before = (await validateManifestDirectory(BEFORE, REPO_ROOT)).issues.map(formatIssue);
    expect(before).to.include("(routes): GET /v1/inbox/events: served by no HTTPRoute, so nothing answers the proxy's own refusals for it in the envelope");
  });

  it('refuses an override that would also replace the services\' own answers (source All or unset)', () => {
    const changed = withChange(docs, 'BackendTrafficPolicy', 'repo-chat-streams', (p) => {
      delete overrides(p)[1]!.source;
    });
    const found = messages(changed);
    expect(found).to.include(`${STREAMS}: a responseOverride with source unset (All) would replace the services' own answers (their code, Retry-After and request ID): set source Local`);
    expect(found).to.include(`${STREAMS}: no responseOverride (source Local) answers Envoy's own 503: the client would get Envoy's plain-text page`);
  });

  it('refuses a refusal left to Envoy\'s plain-text page', () => {
    const changed = withChange(docs, 'BackendTrafficPolicy', 'repo-chat-requests', (p) => {
      overrides(p)[1]!.match.statusCodes = [{ type: 'Value', value: 503 } as never];
    });
    const found = messages(changed);
    for (const status of [502, 504]) expect(found).to.include(`${API}: no responseOverride (source Local) answers Envoy's own ${status}: the client would get Envoy's plain-text page`);
  });

  it('refuses an answer that is not the envelope with the request ID, the right code, status and headers', () => {
    const wrongCode = withChange(docs, 'BackendTrafficPolicy', 'repo-chat-streams', (p) => {
      const r = overrides(p)[1]!.response;
      r.body.inline = r.body.inline.replace('STREAM_UNAVAILABLE', 'STORE_UNAVAILABLE');
      r.header.set = r.header.set.filter((h: { name: string }) => h.name !== 'Retry-After');
    });
    expect(messages(wrongCode)).to.include(`${STREAMS}: the answer to Envoy's own 503: it must set Retry-After (seconds); its code must be STREAM_UNAVAILABLE, is STORE_UNAVAILABLE`);
    const broken = withChange(docs, 'BackendTrafficPolicy', 'repo-chat-requests', (p) => {
      const r = overrides(p)[0]!.response;
      r.statusCode = 413;
      r.body.inline = '<html>too large</html>';
      r.header.set = [];
    });
    expect(messages(broken)).to.include(
      `${API}: the answer to Envoy's own 413: its status must be 400, is 413; it must set X-Request-Id to %REQ(X-REQUEST-ID)%; it must set Cache-Control no-store; its body is not the envelope { error: { code, message, requestId } }`,
    );
    const otherId = withChange(docs, 'BackendTrafficPolicy', 'repo-chat-requests', (p) => {
      const r = overrides(p)[1]!.response;
      r.body.inline = r.body.inline.replace('%REQ(X-REQUEST-ID)%', 'unknown');
    });
    expect(messages(otherId).join('\n')).to.contain("its requestId must be %REQ(X-REQUEST-ID)% and its message a sentence");
  });

  it('refuses a body limit at or below API_BODY_LIMIT_BYTES, or none, on the route that takes bodies', () => {
    const low = withChange(docs, 'BackendTrafficPolicy', 'repo-chat-requests', (p) => {
      p.spec.requestBuffer.limit = '256Ki';
    });
    expect(messages(low)).to.include("ingress-routes.yaml HTTPRoute/repo-chat-api: requestBuffer.limit (262144 bytes) must be above API_BODY_LIMIT_BYTES (262144), or a body the API would answer itself gets the proxy's 413");
    const none = withChange(docs, 'BackendTrafficPolicy', 'repo-chat-requests', (p) => {
      delete p.spec.requestBuffer;
    });
    expect(messages(none)).to.include('ingress-routes.yaml HTTPRoute/repo-chat-api: BackendTrafficPolicy repo-chat-requests needs requestBuffer.limit above API_BODY_LIMIT_BYTES (262144): the route takes bodies');
  });

  it("refuses the proxy's own rate limiting", () => {
    const changed = withChange(docs, 'BackendTrafficPolicy', 'repo-chat-requests', (p) => {
      p.spec.rateLimit = { type: 'Local', local: { rules: [{ limit: { requests: 10, unit: 'Second' } }] } };
    });
    expect(messages(changed)).to.include("ingress-routes.yaml BackendTrafficPolicy/repo-chat-requests: rateLimit: the proxy's own 429s could not be told from the services' (rate limits are the API's and the stream caps')");
  });

  it('decides every status Envoy answers by itself, and overrides only statuses every operation declares', () => {
    expect(Object.keys(PROXY_REFUSALS).map(Number)).to.include.members([400, 404, 408, 413, 429, 431, 502, 503, 504]);
    const operations = specOperations(REPO_ROOT)!;
    expect([...serviceStatuses(operations)]).to.include.members([400, 401, 403, 404, 405, 409, 429, 503]);
    for (const [status, { route, why, answer }] of Object.entries(PROXY_REFUSALS)) {
      expect(why, status).not.to.equal('');
      if (route === 'override') for (const o of operations) expect(o.statuses.has(answer!.status), `${o.method} ${o.template}`).to.equal(true);
      else expect(answer, status).to.equal(undefined);
    }
  });

  it('reads quantities of bytes', () => {
    expect([quantityBytes('1Mi'), quantityBytes('512Ki'), quantityBytes('1048577'), quantityBytes('1G')]).to.deep.equal([1048576, 524288, 1048577, 1e9]);
    expect(quantityBytes('1 MiB')).to.equal(undefined);
    expect(quantityBytes(undefined)).to.equal(undefined);
  });
});
