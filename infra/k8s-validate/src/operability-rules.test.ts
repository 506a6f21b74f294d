import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { formatIssue, type ManifestDocument } from './issue.ts';
import { configChecksum, quantity } from './operability-rules.ts';
import { committedDocuments, MANIFEST_DIR, REPO_ROOT, withChange } from './test-support.ts';
import { validateDocuments, validateManifestDirectory } from './validate-manifests.ts';

const messages = (docs: ManifestDocument[], root = REPO_ROOT) => validateDocuments(docs, root).map(formatIssue);
/** infra/k8s as it was before these rules: each rule must fail on it. */
const BEFORE = fileURLToPath(new URL('../fixtures/k8s-before', import.meta.url));

describe('operability rules (secrets, headroom, rollout and supply chain, migrations)', () => {
  let docs: ManifestDocument[];
  let beforeIssues: string[];
  before(async () => {
    docs = await committedDocuments();
    beforeIssues = (await validateManifestDirectory(BEFORE, REPO_ROOT)).issues.map(formatIssue);
  });

  it('accepts the committed manifests', async () => {
    expect((await validateManifestDirectory(MANIFEST_DIR, REPO_ROOT)).issues.map(formatIssue)).to.deep.equal([]);
  });

  describe('each fails on the manifests before them', () => {
    it('secrets: a Secret in an applied manifest', () => {
      expect(beforeIssues).to.include('secret.yaml Secret/repo-chat-secrets: a Secret in an applied manifest overwrites the real one at every `kubectl apply -k`: keep it in a *.example.yaml template no kustomization lists');
    });

    it('headroom: the HPA target at the connection cap, maxReplicas below the capacity model, PDBs without an eviction policy', () => {
      expect(beforeIssues).to.include.members([
        'stream-gateway.yaml HorizontalPodAutoscaler/stream-gateway: target 20000 streams per pod leaves no headroom: the HPA adds pods only past 22000 (its 10 % tolerance), at or above HTTP_MAX_CONNECTIONS 20000, where the pod refuses connections',
        "stream-gateway.yaml HorizontalPodAutoscaler/stream-gateway: maxReplicas 50 holds 1000000 streams at the target; docs/capacity.md's 1000000 plus 10 % needs 55",
      ]);
      for (const name of ['api', 'stream-gateway', 'notifier', 'ingress-errors', 'viewer']) {
        expect(beforeIssues).to.include(`${name}.yaml PodDisruptionBudget/${name}: unhealthyPodEvictionPolicy must be AlwaysAllow: otherwise pods made unready by a shared outage block every node drain`);
      }
    });

    it('supply chain: tags in the workloads and in both kustomizations, which name the image twice', () => {
      expect(beforeIssues).to.include.members([
        'kustomization.yaml: images: registry.example.com/repo-chat must be pinned by digest (digest: sha256:<64 hex>, no newTag), not tag 0.1.0',
        'migrate/kustomization.yaml: images: registry.example.com/repo-chat must be pinned by digest (digest: sha256:<64 hex>, no newTag), not tag 0.1.0',
        'migrate/kustomization.yaml: images: registry.example.com/repo-chat is named in 2 places (kustomization.yaml, migrate/kustomization.yaml): name it once, in a component every kustomization includes',
        'stream-gateway.yaml Deployment/stream-gateway: container stream-gateway image "registry.example.com/repo-chat:0.1.0" must be the bare repository registry.example.com/repo-chat: the kustomization\'s images: pins it by digest',
      ]);
    });

    it('rollout: no config checksum, Burstable gateways without a PriorityClass, one pool size for every service', () => {
      expect(beforeIssues.filter((m) => m.includes('pod template annotation checksum/config is null'))).to.have.length(5);
      expect(beforeIssues).to.include.members([
        'stream-gateway.yaml Deployment/stream-gateway: container stream-gateway: requests must equal limits for cpu and memory (Guaranteed QoS), so node pressure evicts other pods before a pod holding streams',
        'stream-gateway.yaml Deployment/stream-gateway: priorityClassName must name a PriorityClass of these manifests with a value above 0 that is not the global default (has null)',
        'api.yaml Deployment/api: container api connects to PostgreSQL but sets no DATABASE_POOL_SIZE of its own (env): each service\'s pool is sized for its work and summed in the docs',
        'stream-gateway.yaml Deployment/stream-gateway: container stream-gateway connects to PostgreSQL but sets no DATABASE_POOL_SIZE of its own (env): each service\'s pool is sized for its work and summed in the docs',
      ]);
    });

    it('migrations: every pod migrates at start, the Job has neither the ConfigMap nor its own DDL Secret', () => {
      expect(beforeIssues).to.include.members([
        'stream-gateway.yaml Deployment/stream-gateway: container stream-gateway connects to PostgreSQL with MIGRATE_ON_START "unset (true)": only the migration Job may change the schema (set "false" in the ConfigMap)',
        'migrate/migrate-job.yaml Job/chat-migrate: container migrate must take the ConfigMap (envFrom), as the services do',
        'migrate/migrate-job.yaml Job/chat-migrate: container migrate has no DATABASE_POOLER: behind a transaction pooler the migration must know it, as every service does',
        'migrate/migrate-job.yaml Job/chat-migrate: container migrate takes DATABASE_URL from Secret repo-chat-secrets, which the Deployments read: the DDL role\'s URL belongs in a Secret of the Job\'s own',
        'migrate/migrate-job.yaml Job/chat-migrate: container migrate needs MIGRATION_LOCK_TIMEOUT_MS between 1 and 30000: a DDL statement waiting for a lock holds every query of its table behind it',
      ]);
    });

    it('storm absorption: the gateway\'s open rate left to its default', () => {
      expect(beforeIssues).to.include('stream-gateway.yaml Deployment/stream-gateway: container stream-gateway must set GATEWAY_STREAM_OPENS_PER_SECOND and GATEWAY_STREAM_OPEN_BURST (ConfigMap): the pod\'s open rate is what absorbs a reconnect storm');
    });
  });

  it('refuses a migration Job through the transaction pooler, and a lock timeout that is no safeguard', () => {
    const pooled = withChange(docs, 'Job', 'chat-migrate', (j) => {
      const env = j.spec.template.spec.containers[0].env as Array<{ name: string }>;
      j.spec.template.spec.containers[0].env = env.filter((e) => e.name !== 'DATABASE_POOLER');
    });
    expect(messages(pooled)).to.include('migrate/migrate-job.yaml Job/chat-migrate: container migrate migrates through a transaction pooler (DATABASE_POOLER "transaction"): set "none" in its env and point its DATABASE_URL at PostgreSQL itself, since a migration outside a transaction needs one session');
    const patient = withChange(docs, 'Job', 'chat-migrate', (j) => {
      j.spec.template.spec.containers[0].env.find((e: { name: string }) => e.name === 'MIGRATION_LOCK_TIMEOUT_MS').value = '600000';
    });
    expect(messages(patient)).to.include('migrate/migrate-job.yaml Job/chat-migrate: container migrate needs MIGRATION_LOCK_TIMEOUT_MS between 1 and 30000: a DDL statement waiting for a lock holds every query of its table behind it');
  });

  it('refuses an open rate too low for the survivors of a lost gateway, and a burst below it', () => {
    const slow = withChange(docs, 'ConfigMap', 'repo-chat-config', (c) => {
      c.data.GATEWAY_STREAM_OPENS_PER_SECOND = '200';
      c.data.GATEWAY_STREAM_OPEN_BURST = '100';
    });
    expect(messages(slow)).to.include.members([
      'stream-gateway.yaml Deployment/stream-gateway: container stream-gateway: GATEWAY_STREAM_OPEN_BURST 100 is below GATEWAY_STREAM_OPENS_PER_SECOND 200: a quiet pod could not admit one second\'s opens at once',
      'stream-gateway.yaml Deployment/stream-gateway: container stream-gateway: GATEWAY_STREAM_OPENS_PER_SECOND 200 lets 4 pods take a lost pod\'s 16000 streams in 20 s, above 10 s',
    ]);
  });

  it('refuses a Dockerfile whose base image is a tag without a digest', async () => {
    const root = await mkdtemp(join(tmpdir(), 'repo-root-'));
    const dockerfile = await readFile(join(REPO_ROOT, 'Dockerfile'), 'utf8');
    await writeFile(join(root, 'Dockerfile'), dockerfile.replace(/^ARG NODE_IMAGE=.*$/m, 'ARG NODE_IMAGE=node:20-bookworm-slim'));
    expect(messages(docs, root)).to.include('Dockerfile: FROM ${NODE_IMAGE} is node:20-bookworm-slim, a mutable tag: pin the base image by digest (node:20-bookworm-slim@sha256:<digest>)');
    await writeFile(join(root, 'Dockerfile'), 'FROM node:20@sha256:' + 'a'.repeat(64) + ' AS build\nFROM build AS runtime\n');
    expect(messages(docs, root).filter((m) => m.startsWith('Dockerfile'))).to.deep.equal([]);
  });

  it('refuses a kustomization that lists the Secret template', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'k8s-tree-'));
    await cp(MANIFEST_DIR, dir, { recursive: true });
    const path = join(dir, 'kustomization.yaml');
    await writeFile(path, (await readFile(path, 'utf8')).replace('  - configmap.yaml\n', '  - configmap.yaml\n  - secrets/secret.example.yaml\n'));
    const report = await validateManifestDirectory(dir, REPO_ROOT);
    expect(report.issues.map(formatIssue)).to.include('kustomization.yaml: resource "secrets/secret.example.yaml" is a template: applying it would overwrite the real objects with its placeholders');
  });

  it('refuses a kustomization that loses the release component, and a component that is not there', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'k8s-tree-'));
    await cp(MANIFEST_DIR, dir, { recursive: true });
    const path = join(dir, 'migrate/kustomization.yaml');
    await writeFile(path, (await readFile(path, 'utf8')).replace('  - ../release\n', '  - ../releases\n'));
    const report = await validateManifestDirectory(dir, REPO_ROOT);
    expect(report.issues.map(formatIssue)).to.include.members([
      'migrate/kustomization.yaml: component "../releases" is no folder with a kind Component kustomization',
      'migrate/kustomization.yaml: images: no entry for registry.example.com/repo-chat here or in a component; pin it by digest (kustomize edit set image registry.example.com/repo-chat@sha256:<digest>)',
    ]);
  });

  it('refuses a ConfigMap edit whose checksum the pod templates do not carry, and names the one to set', () => {
    let edited: Record<string, string> = {};
    const changed = withChange(docs, 'ConfigMap', 'repo-chat-config', (c) => {
      c.data.LOG_LEVEL = 'debug';
      edited = c.data;
    });
    const viewer = docs.find((d) => d.file === 'viewer.yaml' && (d.value as { kind?: string }).kind === 'Deployment')!.value as { spec: { template: { metadata: { annotations: Record<string, string> } } } };
    const carried = viewer.spec.template.metadata.annotations['checksum/config'];
    expect(messages(changed)).to.include(`viewer.yaml Deployment/viewer: pod template annotation checksum/config is "${carried}"; the ConfigMap's data hashes to ${configChecksum(edited)}: set it, so the change rolls the pods`);
  });

  it('refuses a pool size the docs do not count, and a gateway target raised to the cap', () => {
    const pool = withChange(docs, 'Deployment', 'stream-gateway', (d) => {
      d.spec.template.spec.containers[0].env.find((e: { name: string }) => e.name === 'DATABASE_POOL_SIZE').value = '5';
    });
    expect(messages(pool)).to.include('docs/operations.md: must state "630 client connections at the HPA maxima" (api 20 × 10 + notifier 8 × 10 + stream-gateway 70 × 5), states 560');
    const raised = withChange(docs, 'HorizontalPodAutoscaler', 'stream-gateway', (h) => {
      h.spec.metrics[0].pods.target.averageValue = '19k';
    });
    expect(messages(raised).join('\n')).to.contain('target 19000 streams per pod leaves no headroom: the HPA adds pods only past 20900');
  });

  it('refuses a gateway whose requests differ from its limits in any unit', () => {
    const changed = withChange(docs, 'Deployment', 'stream-gateway', (d) => {
      d.spec.template.spec.containers[0].resources.requests.cpu = '900m';
    });
    expect(messages(changed)).to.include('stream-gateway.yaml Deployment/stream-gateway: container stream-gateway: requests must equal limits for cpu and memory (Guaranteed QoS), so node pressure evicts other pods before a pod holding streams');
    const same = withChange(docs, 'Deployment', 'stream-gateway', (d) => {
      d.spec.template.spec.containers[0].resources.requests = { cpu: '1000m', memory: '2048Mi' };
    });
    expect(messages(same)).to.deep.equal([]);
    expect([quantity('500m'), quantity('2Gi'), quantity('16k'), quantity(3), quantity('1x')]).to.deep.equal([0.5, 2 ** 31, 16_000, 3, Number.NaN]);
  });
});
