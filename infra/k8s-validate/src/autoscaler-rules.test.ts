import { expect } from 'chai';
import { formatIssue, type ManifestDocument } from './issue.ts';
import { committedDocuments, REPO_ROOT, withChange } from './test-support.ts';
import { validateDocuments } from './validate-manifests.ts';

const messages = (docs: ManifestDocument[]) => validateDocuments(docs, REPO_ROOT).map(formatIssue);
const HPA = 'stream-gateway.yaml HorizontalPodAutoscaler/stream-gateway';

describe('autoscaler rules: the gateways scale on their open-streams gauge', () => {
  let docs: ManifestDocument[];
  before(async () => {
    docs = await committedDocuments();
  });

  it('accepts the committed HPA and prometheus-adapter rule', () => {
    expect(messages(docs)).to.deep.equal([]);
  });

  it('refuses a Pods metric no adapter rule serves', () => {
    const changed = withChange(docs, 'HorizontalPodAutoscaler', 'stream-gateway', (h) => {
      h.spec.metrics[0].pods.metric.name = 'chat_gateway_streams';
    });
    expect(messages(changed)).to.include(`${HPA}: Pods metric chat_gateway_streams is served by no prometheus-adapter rule (prometheus-adapter)`);
  });

  it('refuses an adapter rule over a counter, or over a metric the gateway does not export', () => {
    const counter = withChange(docs, 'ConfigMap', 'adapter-config', (c) => {
      c.data['config.yaml'] = c.data['config.yaml'].replace("seriesQuery: 'chat_gateway_streams_open{", "seriesQuery: 'chat_gateway_streams_opened_total{").replace('matches: ^chat_gateway_streams_open$', 'matches: ^chat_gateway_streams_opened_total$');
    });
    expect(messages(counter)).to.include(`${HPA}: Pods metric chat_gateway_streams_open reads chat_gateway_streams_opened_total, which is not a gauge of its target: it is a counter`);
    const unknown = withChange(docs, 'ConfigMap', 'adapter-config', (c) => {
      c.data['config.yaml'] = c.data['config.yaml'].replace("seriesQuery: 'chat_gateway_streams_open{", "seriesQuery: 'chat_gateway_open_streams{").replace('matches: ^chat_gateway_streams_open$', 'matches: ^chat_gateway_open_streams$');
    });
    expect(messages(unknown)).to.include(`${HPA}: Pods metric chat_gateway_streams_open reads chat_gateway_open_streams, which is not a gauge of its target: stream-gateway exports no metric of that name`);
  });

  it('refuses a per-pod metric that is not averaged, and a rule without the pod label mapping', () => {
    const value = withChange(docs, 'HorizontalPodAutoscaler', 'stream-gateway', (h) => {
      h.spec.metrics[0].pods.target = { type: 'Value', value: '20000' };
    });
    expect(messages(value)).to.include(`${HPA}: Pods metric chat_gateway_streams_open: target must be an AverageValue (per pod)`);
    const noPod = withChange(docs, 'ConfigMap', 'adapter-config', (c) => {
      c.data['config.yaml'] = c.data['config.yaml'].replace('pod: { resource: pod }', 'kubernetes_pod_name: { resource: pod }');
    });
    expect(messages(noPod)).to.include(`${HPA}: Pods metric chat_gateway_streams_open: its adapter rule must map the labels pod and namespace to those resources`);
  });

  it("keeps add-on objects in their add-on's namespace, and the application in its own", () => {
    const moved = withChange(docs, 'ConfigMap', 'adapter-config', (c) => {
      c.metadata.namespace = 'repo-chat';
    });
    expect(messages(moved)).to.include('prometheus-adapter/adapter-config.yaml ConfigMap/adapter-config: metadata.namespace must be monitoring');
  });
});
