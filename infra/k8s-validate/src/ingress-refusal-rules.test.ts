import { expect } from 'chai';
import { formatIssue, type ManifestDocument } from './issue.ts';
import { INGRESS_REFUSALS, nginxSizeBytes, serviceStatuses } from './ingress-refusal-rules.ts';
import { committedDocuments, REPO_ROOT, withChange } from './test-support.ts';
import { validateDocuments } from './validate-manifests.ts';

const messages = (docs: ManifestDocument[]) => validateDocuments(docs, REPO_ROOT).map(formatIssue);
const A = 'nginx.ingress.kubernetes.io/';

describe('ingress refusals rule', () => {
  let docs: ManifestDocument[];
  before(async () => {
    docs = await committedDocuments();
  });

  it('passes the committed manifests: both Ingresses route every refusal of their own to ingress-errors', () => {
    expect(messages(docs).filter((m) => m.includes('ingress.yaml'))).to.deep.equal([]);
  });

  it('refuses a proxy-body-size at or below API_BODY_LIMIT_BYTES, a missing one and an unlimited one', () => {
    const low = withChange(docs, 'Ingress', 'repo-chat-api', (i) => {
      i.metadata.annotations[`${A}proxy-body-size`] = '256k';
    });
    expect(messages(low)).to.include(
      'ingress.yaml Ingress/repo-chat-api: proxy-body-size (262144 bytes) must be above API_BODY_LIMIT_BYTES (262144), or a body the API would answer itself gets nginx\'s 413',
    );
    const raisedApiLimit = withChange(docs, 'ConfigMap', 'repo-chat-config', (c) => {
      c.data.API_BODY_LIMIT_BYTES = String(2 * 1024 * 1024);
    });
    expect(messages(raisedApiLimit)).to.include(
      'ingress.yaml Ingress/repo-chat-streams: proxy-body-size (1048576 bytes) must be above API_BODY_LIMIT_BYTES (2097152), or a body the API would answer itself gets nginx\'s 413',
    );
    const missing = withChange(docs, 'Ingress', 'repo-chat-streams', (i) => {
      delete i.metadata.annotations[`${A}proxy-body-size`];
    });
    expect(messages(missing)).to.include(`ingress.yaml Ingress/repo-chat-streams: needs ${A}proxy-body-size (a size above API_BODY_LIMIT_BYTES 262144)`);
    const unlimited = withChange(docs, 'Ingress', 'repo-chat-api', (i) => {
      i.metadata.annotations[`${A}proxy-body-size`] = '0';
    });
    expect(messages(unlimited)).to.include('ingress.yaml Ingress/repo-chat-api: proxy-body-size 0 (unlimited) lets nginx buffer bodies of any size: set a size above API_BODY_LIMIT_BYTES');
  });

  it("refuses custom-http-errors that leave one of the ingress's own refusals out", () => {
    const changed = withChange(docs, 'Ingress', 'repo-chat-api', (i) => {
      i.metadata.annotations[`${A}custom-http-errors`] = '502,504';
    });
    expect(messages(changed)).to.include("ingress.yaml Ingress/repo-chat-api: custom-http-errors must list 413 (the ingress's own 413 would reach the client as an HTML page)");
    const none = withChange(docs, 'Ingress', 'repo-chat-streams', (i) => {
      delete i.metadata.annotations[`${A}custom-http-errors`];
    });
    expect(messages(none).filter((m) => m.includes('custom-http-errors must list'))).to.have.length(3);
  });

  it('refuses custom-http-errors that list a status the services answer themselves (their envelope would be replaced)', () => {
    const changed = withChange(docs, 'Ingress', 'repo-chat-streams', (i) => {
      i.metadata.annotations[`${A}custom-http-errors`] = '413,429,502,503,504';
    });
    const found = messages(changed);
    for (const status of [429, 503]) {
      expect(found).to.include(
        `ingress.yaml Ingress/repo-chat-streams: custom-http-errors lists ${status}, which the services answer themselves: the ingress would replace their envelope (code, Retry-After, request ID)`,
      );
    }
  });

  it('refuses a default-backend that is not the envelope backend, or none', () => {
    const api = withChange(docs, 'Ingress', 'repo-chat-api', (i) => {
      i.metadata.annotations[`${A}default-backend`] = 'api';
    });
    expect(messages(api)).to.include(
      'ingress.yaml Ingress/repo-chat-api: default-backend must name the Service of the ingress-errors pods (it answers refusals and Services without ready endpoints in the envelope), names api',
    );
    const none = withChange(docs, 'Ingress', 'repo-chat-streams', (i) => {
      delete i.metadata.annotations[`${A}default-backend`];
    });
    expect(messages(none)).to.include(
      'ingress.yaml Ingress/repo-chat-streams: default-backend must name the Service of the ingress-errors pods (it answers refusals and Services without ready endpoints in the envelope), names nothing',
    );
  });

  it("refuses the ingress's own rate limiting", () => {
    const changed = withChange(docs, 'Ingress', 'repo-chat-api', (i) => {
      i.metadata.annotations[`${A}limit-rps`] = '10';
    });
    expect(messages(changed)).to.include(
      `ingress.yaml Ingress/repo-chat-api: ${A}limit-rps: the ingress's own rate limiting answers 429/503 that cannot reach the envelope backend without replacing the services' own`,
    );
  });

  it('decides every status ingress-nginx answers by itself, and routes to the backend only statuses the services never send', () => {
    // nginx's own answers in front of a proxied Service: bad or oversized request heads, slow
    // clients, bodies, the limit-* modules, and the upstream failing, absent or timing out.
    expect(Object.keys(INGRESS_REFUSALS).map(Number)).to.include.members([400, 408, 413, 414, 429, 502, 503, 504]);
    const services = serviceStatuses(REPO_ROOT)!;
    expect([...services].sort()).to.include.members([400, 401, 403, 404, 405, 409, 429, 503]);
    for (const [status, { route, why }] of Object.entries(INGRESS_REFUSALS)) {
      expect(why, status).not.to.equal('');
      if (route === 'custom-http-errors') expect(services.has(Number(status)), status).to.equal(false);
    }
  });

  it('reads nginx sizes', () => {
    expect([nginxSizeBytes('1m'), nginxSizeBytes('512k'), nginxSizeBytes('1048577'), nginxSizeBytes('1G'), nginxSizeBytes('0')]).to.deep.equal([1048576, 524288, 1048577, 1073741824, 0]);
    expect(nginxSizeBytes('1 MiB')).to.equal(undefined);
    expect(nginxSizeBytes(undefined)).to.equal(undefined);
  });
});
