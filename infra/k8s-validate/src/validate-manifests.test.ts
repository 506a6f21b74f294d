import { cp, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { formatIssue } from './issue.ts';
import { MANIFEST_DIR, REPO_ROOT } from './test-support.ts';
import { validateManifestDirectory } from './validate-manifests.ts';

describe('validateManifestDirectory', () => {
  it('finds every kind the deployment needs in infra/k8s, with no issue', async () => {
    const report = await validateManifestDirectory(MANIFEST_DIR, REPO_ROOT);
    expect(report.issues.map(formatIssue)).to.deep.equal([]);
    expect(report.documents).to.be.at.least(20);
  });

  it('refuses a manifest no kustomization lists, and a listed file that is missing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'k8s-tree-'));
    await cp(MANIFEST_DIR, dir, { recursive: true });
    await writeFile(join(dir, 'extra.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: repo-chat}\ndata: {A: "1"}\n');
    await writeFile(join(dir, 'migrate/kustomization.yaml'), 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [migrate-job.yaml, gone.yaml]\n');
    const report = await validateManifestDirectory(dir, REPO_ROOT);
    expect(report.issues.map(formatIssue)).to.include.members([
      'extra.yaml: listed by 0 kustomizations (must be exactly one)',
      'migrate/kustomization.yaml: resource "gone.yaml" does not exist',
    ]);
  });

  it('refuses a broken manifest file on disk', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'k8s-tree-'));
    await cp(MANIFEST_DIR, dir, { recursive: true });
    await writeFile(join(dir, 'network-policy.yaml'), 'apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: broken\n  namespace: repo-chat\nspec:\n  podSelectr: {}\n');
    const report = await validateManifestDirectory(dir, REPO_ROOT);
    expect(report.issues.map(formatIssue)).to.include.members([
      'network-policy.yaml NetworkPolicy/broken: schema: unknown field /spec/podSelectr',
    ]);
  });
});
