/** Rules for configuration objects and namespaces: placeholders only in the Secret, no credentials in the ConfigMap. */
import { findKind } from './kinds.ts';
import { issueFor, ofKind, type Rule } from './rule-context.ts';
import { TEMPLATE } from './manifest-files.ts';
import { PLACEHOLDER_MARK, SECRET_KEYS } from './service-catalog.ts';
import type { Issue } from './issue.ts';

/** A committed Secret holds placeholders only: `stringData` values that are empty or contain REPLACE_ME, no `data`. */
export const secretsArePlaceholders: Rule = (ctx) =>
  ofKind(ctx, 'Secret').flatMap(({ file, object }) => {
    const issues: Issue[] = [];
    if (object.data !== undefined) issues.push(issueFor(file, object, 'has `data` (base64 values); a committed Secret is a template with stringData placeholders'));
    for (const [key, value] of Object.entries((object.stringData ?? {}) as Record<string, string>)) {
      if (value !== '' && !value.includes(PLACEHOLDER_MARK)) issues.push(issueFor(file, object, `stringData.${key} is not a placeholder (must contain ${PLACEHOLDER_MARK} or be empty)`));
    }
    return issues;
  });

/** Credentials never sit in a ConfigMap. */
export const noCredentialsInConfigMaps: Rule = (ctx) =>
  ofKind(ctx, 'ConfigMap').flatMap(({ file, object }) =>
    Object.keys((object.data ?? {}) as object)
      .filter((key) => SECRET_KEYS.includes(key))
      .map((key) => issueFor(file, object, `${key} is a credential: it belongs in the Secret`)),
  );

/**
 * Secrets appear in templates only (`*.example.yaml`, listed by no kustomization): a Secret in an
 * applied manifest would overwrite the real one, from the secret manager, at every `kubectl apply -k`.
 */
export const secretsOnlyInTemplates: Rule = (ctx) =>
  ofKind(ctx, 'Secret')
    .filter(({ file }) => !TEMPLATE.test(file))
    .map(({ file, object }) => issueFor(file, object, 'a Secret in an applied manifest overwrites the real one at every `kubectl apply -k`: keep it in a *.example.yaml template no kustomization lists'));

/** Every namespaced object lives in the namespace the manifests declare. */
export const oneNamespace: Rule = (ctx) => {
  const namespaces = ofKind(ctx, 'Namespace').map((n) => n.object.metadata?.name);
  if (namespaces.length !== 1) return [{ file: '(all)', message: `expected exactly one Namespace, found ${namespaces.length}` }];
  return ctx.objects
    .filter((o) => findKind(o.object.apiVersion, o.object.kind)?.namespaced !== false && o.object.metadata?.namespace !== namespaces[0])
    .map(({ file, object }) => issueFor(file, object, `metadata.namespace must be ${namespaces[0]}`));
};
