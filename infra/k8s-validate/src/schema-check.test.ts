import { expect } from 'chai';
import { formatIssue } from './issue.ts';
import { parseManifestText } from './manifest-files.ts';
import { committedDocuments, REPO_ROOT, withChange } from './test-support.ts';
import { validateDocuments } from './validate-manifests.ts';

const messages = (docs: Parameters<typeof validateDocuments>[0]) => validateDocuments(docs, REPO_ROOT).map(formatIssue);

describe('Kubernetes schema check', () => {
  it('accepts the committed manifests', async () => {
    expect(messages(await committedDocuments())).to.deep.equal([]);
  });

  it('rejects an unknown kind or apiVersion', async () => {
    const docs = withChange(await committedDocuments(), 'Deployment', 'api', (d) => {
      d.apiVersion = 'extensions/v1beta1';
    });
    expect(messages(docs)).to.include('api.yaml Deployment/api: unknown kind: apiVersion "extensions/v1beta1", kind "Deployment"');
  });

  it('rejects a missing required field', async () => {
    const docs = withChange(await committedDocuments(), 'Deployment', 'stream-gateway', (d) => {
      delete d.spec.selector;
    });
    expect(messages(docs)).to.include('stream-gateway.yaml Deployment/stream-gateway: schema: /spec must have required property selector');
  });

  it('rejects a wrong type', async () => {
    const docs = withChange(await committedDocuments(), 'HorizontalPodAutoscaler', 'api', (h) => {
      h.spec.minReplicas = '3';
    });
    expect(messages(docs)).to.include('api.yaml HorizontalPodAutoscaler/api: schema: /spec/minReplicas must be integer');
  });

  it('rejects a bad enum value', async () => {
    const docs = withChange(await committedDocuments(), 'Service', 'api', (s) => {
      s.spec.ports[0].protocol = 'HTTP';
    });
    expect(messages(docs).join('\n')).to.match(/Service\/api: schema: \/spec\/ports\/0\/protocol must be equal to one of the allowed values/);
  });

  it('rejects unknown fields at any depth (strict)', async () => {
    const docs = withChange(await committedDocuments(), 'Deployment', 'notifier', (d) => {
      d.spec.template.spec.containers[0].resource = d.spec.template.spec.containers[0].resources;
      d.spec.template.spec.containers[0].livenessProbe.httpGet.paths = '/healthz';
      d.spec.template.metadata.label = {};
    });
    expect(messages(docs)).to.include.members([
      'notifier.yaml Deployment/notifier: schema: unknown field /spec/template/spec/containers/0/resource',
      'notifier.yaml Deployment/notifier: schema: unknown field /spec/template/spec/containers/0/livenessProbe/httpGet/paths',
      'notifier.yaml Deployment/notifier: schema: unknown field /spec/template/metadata/label',
    ]);
  });

  it('checks the Gateway API and Envoy Gateway kinds strictly: unknown fields, types, enums, required keys', async () => {
    let docs = withChange(await committedDocuments(), 'HTTPRoute', 'repo-chat-streams', (r) => {
      r.spec.rules[0].timeout = r.spec.rules[0].timeouts;
      r.spec.rules[0].matches[0].path.type = 'Regex';
    });
    docs = withChange(docs, 'BackendTrafficPolicy', 'repo-chat-streams', (p) => {
      p.spec.timeout.http.streamIdleTimeout = '1 minute';
      p.spec.circuitBreaker.maxConnections = '25000';
      delete p.spec.targetRefs;
    });
    docs = withChange(docs, 'EnvoyProxy', 'repo-chat-proxy', (p) => {
      p.spec.provider.kubernetes.envoyDeployment.container.resources.limit = {};
    });
    expect(messages(docs)).to.include.members([
      'ingress-routes.yaml HTTPRoute/repo-chat-streams: schema: /spec/rules/0/matches/0/path/type must be one of ["Exact","PathPrefix","RegularExpression"]',
      'ingress-routes.yaml HTTPRoute/repo-chat-streams: schema: unknown field /spec/rules/0/timeout',
      'ingress-routes.yaml BackendTrafficPolicy/repo-chat-streams: schema: /spec must have required property targetRefs',
      'ingress-routes.yaml BackendTrafficPolicy/repo-chat-streams: schema: /spec/timeout/http/streamIdleTimeout must match /^([0-9]{1,5}(h|m|s|ms)){1,4}$/',
      'ingress-routes.yaml BackendTrafficPolicy/repo-chat-streams: schema: /spec/circuitBreaker/maxConnections must be integer',
      'ingress-gateway.yaml EnvoyProxy/repo-chat-proxy: schema: unknown field /spec/provider/kubernetes/envoyDeployment/container/resources/limit',
    ]);
  });

  it('does not take label or annotation keys for fields', async () => {
    const docs = withChange(await committedDocuments(), 'Deployment', 'api', (d) => {
      d.metadata.labels['example.com/anything'] = 'x';
      d.spec.template.metadata.annotations['example.com/other'] = 'y';
    });
    expect(messages(docs)).to.deep.equal([]);
  });

  it('reports YAML errors such as duplicate keys, and reads YAML 1.1 booleans as Kubernetes does', () => {
    const dup = parseManifestText('x.yaml', 'apiVersion: v1\nkind: ConfigMap\nkind: Secret\nmetadata: {name: a}\n');
    expect(dup.issues.map((i) => i.message).join('\n')).to.match(/Map keys must be unique/);
    const yes = parseManifestText('y.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: repo-chat}\ndata: {FLAG: yes}\n');
    expect(messages(yes.documents)).to.include('y.yaml ConfigMap/a: schema: /data/FLAG must be string');
  });
});
