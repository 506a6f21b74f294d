import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { fixtureSchema, type Fixture, type FixtureBot, type FixtureRepository, type Revocation } from './fixture.schema.ts';

/** A fixture branch as stored. */
export type FixtureBranch = FixtureRepository['branches'][number];

/** A repository and its branches by id: chat asks about one scope per request, and a fixture may hold thousands of branches. */
interface RepositoryIndex {
  repository: FixtureRepository;
  branches: Map<string, FixtureBranch>;
}

function indexRepositories(fixture: Fixture): Map<string, RepositoryIndex> {
  return new Map(fixture.repositories.map((repository) => [repository.id, { repository, branches: new Map(repository.branches.map((b) => [b.id, b])) }]));
}

/** Path of the demo fixture bundled with dev-core, used when no fixture is configured. */
export const DEMO_FIXTURE_PATH = fileURLToPath(new URL('../fixtures/demo-fixture.json', import.meta.url));

/** A fixture that failed validation; `issues` lists what is wrong and where, for the 400 answer. */
export class FixtureInvalidError extends Error {
  readonly issues: { path: string; message: string }[];

  constructor(issues: { path: string; message: string }[]) {
    super(`fixture invalid: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`);
    this.name = 'FixtureInvalidError';
    this.issues = issues;
  }
}

/** Validates unknown input as a fixture, or throws {@link FixtureInvalidError}. */
export function parseFixture(input: unknown): Fixture {
  const result = fixtureSchema.safeParse(input);
  if (!result.success) {
    throw new FixtureInvalidError(
      result.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })),
    );
  }
  return result.data;
}

/** Reads and validates a fixture file; a file that is not JSON is reported like any other invalid fixture. */
export async function loadFixtureFile(path: string): Promise<Fixture> {
  const text = await readFile(path, 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new FixtureInvalidError([{ path: '', message: `not JSON (${(cause as Error).message})` }]);
  }
  return parseFixture(json);
}

/** What a token says about itself, for the revocation check. */
export interface TokenIdentity {
  subjectId: string;
  /** The token's `jti`. */
  tokenId?: string | undefined;
  /** The token's `client_id`: the marketplace app it was issued to. */
  clientId?: string | undefined;
}

/**
 * The live data of dev-core. Replacing it swaps one reference, so every later decision (including a
 * stream recheck already in flight on the next call) sees the new permissions at once. Revocations
 * come from the fixture's `revocations` and from `revoke` (`POST /dev/revocations`); the latter are
 * kept across fixture replacements, as a revoked token never comes back.
 */
export class FixtureStore {
  #fixture: Fixture;
  #repositories: Map<string, RepositoryIndex>;
  readonly #revoked: Revocation[] = [];

  constructor(fixture: Fixture) {
    this.#fixture = fixture;
    this.#repositories = indexRepositories(fixture);
  }

  /** Records a revocation made after start. */
  revoke(revocation: Revocation): void {
    this.#revoked.push({ ...revocation });
  }

  /** The revocations made after start, oldest first. */
  get revocations(): Revocation[] {
    return this.#revoked.map((r) => ({ ...r }));
  }

  /**
   * Whether a token was revoked: its `jti` is, or its app was uninstalled for its subject or for
   * everyone. A token that names no `jti` or no `client_id` is not matched by the rule it lacks.
   */
  isRevoked(token: TokenIdentity): boolean {
    const matches = (r: Revocation): boolean =>
      r.jti !== undefined
        ? r.jti === token.tokenId
        : r.clientId === token.clientId && (r.subjectId === undefined || r.subjectId === token.subjectId);
    return (this.#fixture.revocations?.some(matches) ?? false) || this.#revoked.some(matches);
  }

  get current(): Fixture {
    return this.#fixture;
  }

  replace(fixture: Fixture): void {
    this.#repositories = indexRepositories(fixture);
    this.#fixture = fixture;
  }

  /**
   * Makes `redirectUri` the one registered callback of app `clientId`, the rest of the fixture as it
   * is, for a process that learns its viewer's address only once it listens. Codes issued to the
   * previous callback can no longer be exchanged. False when no such app is registered.
   */
  registerCallback(clientId: string, redirectUri: string): boolean {
    const apps = this.#fixture.apps;
    if (apps === undefined || !apps.some((a) => a.clientId === clientId)) return false;
    this.replace(parseFixture({ ...this.#fixture, apps: apps.map((a) => (a.clientId === clientId ? { ...a, redirectUri } : a)) }));
    return true;
  }

  findRepository(repositoryId: string): FixtureRepository | undefined {
    return this.#repositories.get(repositoryId)?.repository;
  }

  /** A branch of a repository, when both exist (a deleted branch still does). */
  findBranch(repositoryId: string, branchId: string): FixtureBranch | undefined {
    return this.#repositories.get(repositoryId)?.branches.get(branchId);
  }

  findBot(botId: string): FixtureBot | undefined {
    return this.#fixture.bots.find((b) => b.id === botId);
  }

  /** Every known user: those listed in `users`, then members named only in repositories. */
  knownUsers(): string[] {
    const ids = new Set(this.#fixture.users.map((u) => u.id));
    for (const repository of this.#fixture.repositories) for (const id of Object.keys(repository.members)) ids.add(id);
    return [...ids];
  }

  /** A user is known when listed in `users` or named as a member of any repository. */
  isKnownUser(userId: string): boolean {
    return (
      this.#fixture.users.some((u) => u.id === userId) ||
      this.#fixture.repositories.some((r) => Object.hasOwn(r.members, userId))
    );
  }
}

/** Zod's own type for the JSON value of a fixture file, re-exported for callers that build fixtures. */
export type FixtureInput = z.input<typeof fixtureSchema>;
