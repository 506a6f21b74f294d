import { z } from 'zod';

/** Crockford base32 ULID in canonical form (dev-core stands apart from chat's packages, so it keeps its own copy). */
const CANONICAL_ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

const ulidSchema = z.string().regex(CANONICAL_ULID, 'must be a canonical ULID');
const principalIdSchema = z.string().min(1).max(128);

/**
 * A repository's or branch's display name (a branch name as git spells it, `feature/x` included).
 * Optional, so fixtures written without names still load and read back as written.
 */
const nameSchema = z.string().min(1).max(255).optional();

const branchSchema = z.object({
  id: ulidSchema,
  state: z.enum(['active', 'deleted']),
  name: nameSchema,
});

/** A full commit ID: 40 lowercase hexadecimal digits (SHA-1 object name). */
const commitShaSchema = z.string().regex(/^[0-9a-f]{40}$/, 'must be a full 40-digit lowercase hexadecimal commit ID');

const repositorySchema = z.object({
  id: ulidSchema,
  state: z.enum(['active', 'archived']),
  name: nameSchema,
  branches: z.array(branchSchema).default([]),
  members: z.record(principalIdSchema, z.enum(['read', 'write'])).default({}),
  /** Commits the repository holds, for the commit look-up; optional so a fixture reads back as written. */
  commits: z.array(commitShaSchema).optional(),
});

/** An OAuth scope name: RFC 6749 scope-token characters, kept to a readable subset. */
export const scopeSchema = z.string().regex(/^[a-z][a-z0-9:._-]{0,63}$/, 'must be a scope name (a-z, 0-9, ":", ".", "_", "-")');

/**
 * A marketplace app registered with core. `redirectUri` is its one exact callback (compared as a
 * string, never by prefix); `scopes` are those it declares and may ever be granted.
 */
const appSchema = z.object({
  clientId: principalIdSchema,
  redirectUri: z
    .string()
    .max(2048)
    .refine(isCallbackUrl, 'must be an absolute http(s) URL without fragment or credentials'),
  scopes: z.array(scopeSchema).default([]),
});

/** A human's personal installation of an app, with the scopes the human allowed it. */
const installationSchema = z.object({
  clientId: principalIdSchema,
  userId: principalIdSchema,
  scopes: z.array(scopeSchema).default([]),
  state: z.enum(['active', 'uninstalled']),
});

function isCallbackUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hash === '' && !value.includes('#') && url.username === '' && url.password === '';
}

const credentialSchema = z.object({
  id: principalIdSchema,
  state: z.enum(['active', 'revoked']),
});

const grantSchema = z.object({
  id: principalIdSchema,
  repositoryId: ulidSchema,
  subject: z.object({ kind: z.enum(['user', 'organization']), id: principalIdSchema }),
  capabilities: z.array(z.enum(['room:read', 'message:append'])),
  state: z.enum(['active', 'revoked']),
});

const botSchema = z.object({
  id: principalIdSchema,
  credentials: z.array(credentialSchema).default([]),
  grants: z.array(grantSchema).default([]),
});

/**
 * A revocation core holds: one token by its `jti`, or an app uninstalled (every token its
 * `client_id` names), for one user (`subjectId`) or for everyone.
 */
export const revocationSchema = z
  .object({
    jti: principalIdSchema.optional(),
    clientId: principalIdSchema.optional(),
    subjectId: principalIdSchema.optional(),
  })
  .superRefine((r, ctx) => {
    if ((r.jti === undefined) === (r.clientId === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'a revocation names either jti or clientId' });
    }
    if (r.jti !== undefined && r.subjectId !== undefined) {
      ctx.addIssue({ code: 'custom', message: 'subjectId goes with clientId only', path: ['subjectId'] });
    }
  });

export type Revocation = z.infer<typeof revocationSchema>;

/** Collects an issue for every ID that appears twice in `ids`, so lookups by ID stay unambiguous. */
function reportDuplicates(ids: string[], what: string, path: (string | number)[], ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) ctx.addIssue({ code: 'custom', message: `duplicate ${what} id ${id}`, path });
    seen.add(id);
  }
}

/**
 * The data dev-core answers from (docs/core-contract.md, "dev-core"). Unknown properties
 * are dropped rather than refused, so fixtures written for a later shape still load; every listed field
 * is checked. Branch IDs are unique across repositories because a branch ID names one branch forever.
 */
export const fixtureSchema = z
  .object({
    users: z.array(z.object({ id: principalIdSchema })).default([]),
    organizations: z.array(z.object({ id: principalIdSchema })).default([]),
    repositories: z.array(repositorySchema).default([]),
    bots: z.array(botSchema).default([]),
    /**
     * Token IDs revoked and app installations removed before start (`POST /dev/revocations` adds
     * more). Optional without a default, so a fixture without it reads back exactly as written.
     */
    revocations: z.array(revocationSchema).optional(),
    /** Registered marketplace apps (the OAuth handoff); optional so a fixture reads back as written. */
    apps: z.array(appSchema).optional(),
    /** Per-human app installations; optional so a fixture reads back as written. */
    installations: z.array(installationSchema).optional(),
  })
  .superRefine((fixture, ctx) => {
    reportDuplicates(fixture.users.map((u) => u.id), 'user', ['users'], ctx);
    reportDuplicates(fixture.organizations.map((o) => o.id), 'organization', ['organizations'], ctx);
    reportDuplicates(fixture.repositories.map((r) => r.id), 'repository', ['repositories'], ctx);
    reportDuplicates(fixture.repositories.flatMap((r) => r.branches.map((b) => b.id)), 'branch', ['repositories'], ctx);
    // A name resolves to one live branch; deleted branches may share it with each other and with a live one.
    fixture.repositories.forEach((repository, index) => {
      const live = repository.branches.filter((b) => b.state === 'active' && b.name !== undefined).map((b) => b.name!);
      reportDuplicates(live, 'active branch name', ['repositories', index, 'branches'], ctx);
    });
    reportDuplicates(fixture.bots.map((b) => b.id), 'bot', ['bots'], ctx);
    reportDuplicates((fixture.apps ?? []).map((a) => a.clientId), 'app', ['apps'], ctx);
    reportDuplicates((fixture.installations ?? []).map((i) => `${i.clientId}/${i.userId}`), 'installation', ['installations'], ctx);
    fixture.bots.forEach((bot, index) => {
      reportDuplicates(bot.credentials.map((c) => c.id), 'credential', ['bots', index, 'credentials'], ctx);
      reportDuplicates(bot.grants.map((g) => g.id), 'grant', ['bots', index, 'grants'], ctx);
    });
  });

export type Fixture = z.infer<typeof fixtureSchema>;
export type FixtureRepository = Fixture['repositories'][number];
export type FixtureBot = Fixture['bots'][number];
export type FixtureGrant = FixtureBot['grants'][number];
export type GrantCapability = FixtureGrant['capabilities'][number];
export type FixtureApp = NonNullable<Fixture['apps']>[number];
export type FixtureInstallation = NonNullable<Fixture['installations']>[number];
