import { copyFile, mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { formatIssue, type ManifestDocument } from './issue.ts';
import { committedDocuments, REPO_ROOT, withChange } from './test-support.ts';
import { validateDocuments } from './validate-manifests.ts';

const messages = (docs: ManifestDocument[], root = REPO_ROOT) => validateDocuments(docs, root).map(formatIssue);

describe('project rules', () => {
  let docs: ManifestDocument[];
  before(async () => {
    docs = await committedDocuments();
  });

  it('refuses an image tag or digest on a workload: the kustomization pins the release', () => {
    for (const image of ['registry.example.com/repo-chat:latest', `registry.example.com/repo-chat@sha256:${'a'.repeat(64)}`]) {
      const changed = withChange(docs, 'Deployment', 'api', (d) => {
        d.spec.template.spec.containers[0].image = image;
      });
      expect(messages(changed)).to.include(`api.yaml Deployment/api: container api image "${image}" must be the bare repository registry.example.com/repo-chat: the kustomization's images: pins it by digest`);
    }
  });

  it('refuses a container without a memory limit', () => {
    const changed = withChange(docs, 'Job', 'chat-migrate', (j) => {
      delete j.spec.template.spec.containers[0].resources.limits.memory;
    });
    expect(messages(changed)).to.include('migrate/migrate-job.yaml Job/chat-migrate: container migrate has no limits.memory');
  });

  it('refuses probes on the public port', () => {
    const changed = withChange(docs, 'Deployment', 'api', (d) => {
      d.spec.template.spec.containers[0].readinessProbe.httpGet.port = 'http';
    });
    expect(messages(changed)).to.include('api.yaml Deployment/api: container api needs readinessProbe httpGet /readyz on the admin port');
  });

  it('refuses an admin port that differs from the configured one', () => {
    const changed = withChange(docs, 'ConfigMap', 'repo-chat-config', (c) => {
      c.data.GATEWAY_ADMIN_PORT = '9999';
    });
    expect(messages(changed)).to.include('stream-gateway.yaml Deployment/stream-gateway: container stream-gateway needs a port named admin = GATEWAY_ADMIN_PORT (9999)');
  });

  it('refuses a grace period that does not cover preStop + drain', () => {
    const longerDrain = withChange(docs, 'ConfigMap', 'repo-chat-config', (c) => {
      c.data.GATEWAY_DRAIN_MS = '60000';
    });
    expect(messages(longerDrain)).to.include('stream-gateway.yaml Deployment/stream-gateway: terminationGracePeriodSeconds 50 s is below preStop 5 s + drain 60 s + margin 5 s');
    const noPreStop = withChange(docs, 'Deployment', 'api', (d) => {
      delete d.spec.template.spec.containers[0].lifecycle;
    });
    expect(messages(noPreStop)).to.include('api.yaml Deployment/api: container api needs a preStop sleep (exec ["sleep", "N"] or sleep.seconds)');
  });

  it('refuses a Secret with a real-looking value and credentials in the ConfigMap', () => {
    const secret = withChange(docs, 'Secret', 'repo-chat-secrets', (s) => {
      s.stringData.CORE_SERVICE_TOKEN = 'a-real-token-1234567890';
    });
    expect(messages(secret)).to.include('secrets/secret.example.yaml Secret/repo-chat-secrets: stringData.CORE_SERVICE_TOKEN is not a placeholder (must contain REPLACE_ME or be empty)');
    const config = withChange(docs, 'ConfigMap', 'repo-chat-config', (c) => {
      c.data.CURSOR_SECRET = 'x'.repeat(40);
    });
    expect(messages(config)).to.include('configmap.yaml ConfigMap/repo-chat-config: CURSOR_SECRET is a credential: it belongs in the Secret');
  });

  it('refuses a command that is not the package script', () => {
    const changed = withChange(docs, 'Deployment', 'notifier', (d) => {
      d.spec.template.spec.containers[0].command = ['node', '--import', 'tsx', 'src/main.ts'];
    });
    expect(messages(changed)).to.include(
      'notifier.yaml Deployment/notifier: container notifier runs ["node","--import","tsx","src/main.ts"] in /app/node_modules/@chat/notifier; "start" of services/notifier is ["node","dist/main.js"] in /app/node_modules/@chat/notifier',
    );
    const repoLayout = withChange(docs, 'Deployment', 'notifier', (d) => {
      d.spec.template.spec.containers[0].workingDir = '/app/services/notifier';
    });
    expect(messages(repoLayout)).to.include(
      'notifier.yaml Deployment/notifier: container notifier runs ["node","dist/main.js"] in /app/services/notifier; "start" of services/notifier is ["node","dist/main.js"] in /app/node_modules/@chat/notifier',
    );
  });

  it('follows the package scripts: a changed or missing script fails the same manifests', async () => {
    const root = await mkdtemp(join(tmpdir(), 'k8s-validate-'));
    const pkg = (name: string, scripts: Record<string, string>) => JSON.stringify({ name, scripts });
    for (const dir of ['services/api', 'services/stream-gateway', 'services/notifier', 'libraries/store']) {
      await mkdir(join(root, dir, 'src'), { recursive: true });
      await writeFile(join(root, dir, 'src/main.ts'), '');
    }
    await writeFile(join(root, 'services/api/package.json'), pkg('@chat/api', { start: 'node dist/server.js' }));
    await writeFile(join(root, 'services/stream-gateway/package.json'), pkg('@chat/stream-gateway', { start: 'node dist/main.js' }));
    await writeFile(join(root, 'services/notifier/package.json'), pkg('@chat/notifier', { start: 'tsx src/main.ts' }));
    await writeFile(join(root, 'libraries/store/package.json'), pkg('@chat/store', {}));
    // The docs the sizing rules read, as committed.
    await mkdir(join(root, 'docs'));
    for (const doc of ['docs/capacity.md', 'docs/operations.md']) await copyFile(join(REPO_ROOT, doc), join(root, doc));
    const found = messages(docs, root);
    expect(found).to.include('api.yaml Deployment/api: services/api/src/server.ts (the source of the "start" script\'s entry) does not exist');
    expect(found.join('\n')).to.match(/Deployment\/api: container api runs .* "start" of services\/api is \["node","dist\/server.js"\]/);
    expect(found).to.include('notifier.yaml Deployment/notifier: script "start" of services/notifier is "tsx src/main.ts", not "node dist/<file>.js"');
    expect(found).to.include('migrate/migrate-job.yaml Job/chat-migrate: libraries/store/package.json has no "migrate" script');
    expect(found.filter((m) => m.includes('stream-gateway'))).to.deep.equal([]);
  });

  it('requires an autoscaler and a disruption budget, and no replicas under an autoscaler', () => {
    const withReplicas = withChange(docs, 'Deployment', 'api', (d) => {
      d.spec.replicas = 3;
    });
    expect(messages(withReplicas)).to.include('api.yaml Deployment/api: sets spec.replicas although an autoscaler owns it (each apply would reset the scale)');
    const noPdb = withChange(docs, 'PodDisruptionBudget', 'notifier', (p) => {
      p.spec.selector.matchLabels['app.kubernetes.io/component'] = 'nothing';
    });
    expect(messages(noPdb)).to.include('notifier.yaml Deployment/notifier: no PodDisruptionBudget selects its pods');
  });

  it('routes the stream paths to the gateways and the rest to the API', () => {
    const inboxToApi = withChange(docs, 'HTTPRoute', 'repo-chat-streams', (r) => {
      r.spec.rules[0].matches = r.spec.rules[0].matches.filter((m: { path: { value: string } }) => !m.path.value.endsWith('/inbox/events'));
    });
    expect(messages(inboxToApi)).to.include.members([
      'ingress-routes.yaml HTTPRoute/repo-chat-api: /v1/repositories/01JGFJJZ00QNYBVPQTAT49MN0F/inbox/events must route to the stream-gateway, routes to api',
      'ingress-routes.yaml HTTPRoute/repo-chat-api: /v1/inbox/events must route to the stream-gateway, routes to api',
    ]);
    const prefix = withChange(docs, 'HTTPRoute', 'repo-chat-streams', (r) => {
      r.spec.rules[0].matches[0].path = { type: 'PathPrefix', value: '/v1/repositories/' };
    });
    expect(messages(prefix)).to.include('ingress-routes.yaml HTTPRoute/repo-chat-streams: /v1/repositories/01JGFJJZ00QNYBVPQTAT49MN0F/room/events/extra must route to the api, routes to stream-gateway');
  });

  it("routes the viewer's page, config and assets to the viewer, and nothing of the API", () => {
    const noAssets = withChange(docs, 'HTTPRoute', 'repo-chat-viewer', (r) => {
      r.spec.rules[0].matches.pop();
    });
    expect(messages(noAssets)).to.include('ingress-routes.yaml HTTPRoute/repo-chat-api: /assets/app-3XK2PZ4A.js must route to the viewer, routes to api');
    const catchAll = withChange(docs, 'HTTPRoute', 'repo-chat-viewer', (r) => {
      r.spec.rules[0].matches[0].path.type = 'PathPrefix';
    });
    expect(messages(catchAll)).to.include('ingress-routes.yaml HTTPRoute/repo-chat-viewer: /v1/openapi.json must route to the api, routes to viewer');
  });

  it('refuses references to undefined Services, ports, Secrets and keys', () => {
    const changed = withChange(docs, 'Job', 'chat-migrate', (j) => {
      j.spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.key = 'DB_URL';
    });
    expect(messages(changed)).to.include('migrate/migrate-job.yaml Job/chat-migrate: container migrate refers to Secret repo-chat-migration key DB_URL, which is not defined');
    const svc = withChange(docs, 'Service', 'stream-gateway', (s) => {
      s.spec.ports[0].targetPort = 'web';
    });
    expect(messages(svc)).to.include("stream-gateway.yaml Service/stream-gateway: targetPort web is not a port of stream-gateway's pods");
  });

  it('refuses a hardened setting turned off', () => {
    const changed = withChange(docs, 'Deployment', 'stream-gateway', (d) => {
      d.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem = false;
      d.spec.template.spec.securityContext.runAsNonRoot = false;
    });
    expect(messages(changed)).to.include.members([
      'stream-gateway.yaml Deployment/stream-gateway: pod securityContext.runAsNonRoot must be true',
      'stream-gateway.yaml Deployment/stream-gateway: container stream-gateway: readOnlyRootFilesystem must be true',
    ]);
  });
});
