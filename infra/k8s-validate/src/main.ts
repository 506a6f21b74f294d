/**
 * CLI: `pnpm --filter @chat/k8s-validate validate [manifest dir]` validates infra/k8s (or the given
 * folder) without a cluster and exits non-zero on any finding.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatIssue } from './issue.ts';
import { validateManifestDirectory } from './validate-manifests.ts';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../../..');
const manifestDir = resolve(process.argv[2] ?? `${repoRoot}/infra/k8s`);
const report = await validateManifestDirectory(manifestDir, repoRoot);
for (const issue of report.issues) process.stderr.write(`${formatIssue(issue)}\n`);
process.stdout.write(`${report.documents} documents, ${report.issues.length} issues in ${manifestDir}\n`);
process.exit(report.issues.length === 0 ? 0 : 1);
