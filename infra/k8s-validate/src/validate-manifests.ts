import { configReferencesResolve, commandMatchesPackageScript, imagesNamedByKustomization, resourcesSet, securityHardened } from './workload-rules.ts';
import { graceCoversDrain, probesOnAdminPort, scaledAndProtected } from './deployment-rules.ts';
import { noCredentialsInConfigMaps, oneNamespace, secretsArePlaceholders, secretsOnlyInTemplates } from './config-rules.ts';
import { routesServeTheSpec, servicesResolve } from './routing-rules.ts';
import { refusalsEnveloped } from './ingress-refusal-rules.ts';
import { streamRoutesHeld, streamRoutesNotRetried } from './stream-route-rules.ts';
import { maintainedIngressTier, proxyConnectionsSized, proxyDrainOutlastsStreams } from './proxy-tier-rules.ts';
import { keepAliveOrdered } from './keep-alive-rules.ts';
import { checkImagesByDigest, checkKustomizations } from './kustomization-rules.ts';
import { baseImagePinned, budgetsEvictUnhealthy, configChangesRoll, gatewayHeadroom, gatewayOpenRateSet, migrationsFromTheJobOnly, poolSumDocumented, streamHoldersProtected } from './operability-rules.ts';
import { addonsInTheirNamespace, podsMetricsServed } from './autoscaler-rules.ts';
import { alertsHaveRunbooks, checkMonitoringApart, gatewayFullAlertNearCap, monitoringReadsExportedMetrics, monitorScrapesAdminPorts } from './monitoring-rules.ts';
import { loadManifestTree } from './manifest-files.ts';
import { buildContext, type Rule } from './rule-context.ts';
import { checkSchema } from './schema-check.ts';
import type { Issue, ManifestDocument } from './issue.ts';

/** The project's deployment rules, run once every document passed the schema check. */
export const PROJECT_RULES: Readonly<Record<string, Rule>> = {
  commandMatchesPackageScript,
  resourcesSet,
  imagesNamedByKustomization,
  securityHardened,
  configReferencesResolve,
  probesOnAdminPort,
  graceCoversDrain,
  scaledAndProtected,
  podsMetricsServed,
  addonsInTheirNamespace,
  secretsArePlaceholders,
  secretsOnlyInTemplates,
  noCredentialsInConfigMaps,
  oneNamespace,
  servicesResolve,
  routesServeTheSpec,
  refusalsEnveloped,
  maintainedIngressTier,
  streamRoutesHeld,
  streamRoutesNotRetried,
  keepAliveOrdered,
  proxyConnectionsSized,
  proxyDrainOutlastsStreams,
  gatewayHeadroom,
  budgetsEvictUnhealthy,
  streamHoldersProtected,
  configChangesRoll,
  poolSumDocumented,
  migrationsFromTheJobOnly,
  gatewayOpenRateSet,
  baseImagePinned,
  monitoringReadsExportedMetrics,
  alertsHaveRunbooks,
  monitorScrapesAdminPorts,
  gatewayFullAlertNearCap,
};

export interface ValidationReport {
  documents: number;
  issues: Issue[];
}

/**
 * Validates parsed documents: each against its Kubernetes schema, then (when all are schema-valid,
 * since the rules read their fields) the project's rules. `repoRoot` is where package.json files are read.
 */
export function validateDocuments(documents: ManifestDocument[], repoRoot: string): Issue[] {
  const schemaIssues = documents.flatMap(checkSchema);
  if (schemaIssues.length > 0) return schemaIssues;
  const ctx = buildContext(documents, repoRoot);
  return Object.values(PROJECT_RULES).flatMap((rule) => rule(ctx));
}

/** Validates every YAML file under `manifestDir` (with its kustomizations). */
export async function validateManifestDirectory(manifestDir: string, repoRoot: string): Promise<ValidationReport> {
  const tree = await loadManifestTree(manifestDir);
  const issues = [
    ...tree.issues,
    ...checkKustomizations(manifestDir, tree.kustomizations, tree.manifestFiles),
    ...checkImagesByDigest(tree.kustomizations, tree.documents),
    ...checkMonitoringApart(tree.kustomizations, tree.documents),
    ...validateDocuments(tree.documents, repoRoot),
  ];
  return { documents: tree.documents.length, issues };
}
