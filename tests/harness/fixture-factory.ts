import { ulid } from 'ulid';
import type { DevCoreClient, Revocation } from './dev-core-client.ts';

interface FixtureRepository {
  id: string;
  state: 'active' | 'archived';
  branches: Array<{ id: string; state: 'active' | 'deleted' }>;
  members: Record<string, 'read' | 'write'>;
}

interface FixtureBot {
  id: string;
  credentials: Array<{ id: string; state: 'active' | 'revoked' }>;
  grants: Array<{
    id: string;
    repositoryId: string;
    subject: { kind: 'user' | 'organization'; id: string };
    capabilities: Array<'room:read' | 'message:append'>;
    state: 'active' | 'revoked';
  }>;
}

/** dev-core's fixture shape (architecture brief). */
export interface Fixture {
  users: Array<{ id: string }>;
  organizations: Array<{ id: string }>;
  repositories: FixtureRepository[];
  bots: FixtureBot[];
  /** Token IDs revoked and apps uninstalled (dev-core's `revocations`). */
  revocations?: Revocation[];
}

/**
 * One test's world, all with fresh IDs so tests sharing a process never see each other's rooms:
 * an active repository with an active and a deleted branch, a second repository (whose branch is
 * "foreign" to the first), an archived repository, three people and two bots.
 */
export interface Scenario {
  repositoryId: string;
  branchId: string;
  deletedBranchId: string;
  otherRepositoryId: string;
  foreignBranchId: string;
  archivedRepositoryId: string;
  archivedBranchId: string;
  organizationId: string;
  /** Members: `writer` may write, `reader` may only read; `outsider` exists but is no member. */
  users: { writer: string; reader: string; outsider: string };
  /** `appender` has room:read and message:append (granted through the organization); `reader` has room:read only (granted through `writer`). */
  bots: {
    appender: { id: string; credentialId: string; revokedCredentialId: string; grantId: string };
    reader: { id: string; credentialId: string; grantId: string };
  };
}

/** A fresh scenario and the fixture entries that make it exist. */
export function buildScenario(): { scenario: Scenario; fixture: Fixture } {
  const s = ulid().slice(-10).toLowerCase();
  const users = { writer: `u_writer_${s}`, reader: `u_reader_${s}`, outsider: `u_outsider_${s}` };
  const scenario: Scenario = {
    repositoryId: ulid(),
    branchId: ulid(),
    deletedBranchId: ulid(),
    otherRepositoryId: ulid(),
    foreignBranchId: ulid(),
    archivedRepositoryId: ulid(),
    archivedBranchId: ulid(),
    organizationId: `o_${s}`,
    users,
    bots: {
      appender: { id: `b_appender_${s}`, credentialId: `c_active_${s}`, revokedCredentialId: `c_revoked_${s}`, grantId: `g_append_${s}` },
      reader: { id: `b_reader_${s}`, credentialId: `c_reader_${s}`, grantId: `g_read_${s}` },
    },
  };
  const members = { [users.writer]: 'write', [users.reader]: 'read' } as const;
  const fixture: Fixture = {
    users: Object.values(users).map((id) => ({ id })),
    organizations: [{ id: scenario.organizationId }],
    repositories: [
      {
        id: scenario.repositoryId,
        state: 'active',
        branches: [
          { id: scenario.branchId, state: 'active' },
          { id: scenario.deletedBranchId, state: 'deleted' },
        ],
        members: { ...members },
      },
      { id: scenario.otherRepositoryId, state: 'active', branches: [{ id: scenario.foreignBranchId, state: 'active' }], members: { ...members } },
      { id: scenario.archivedRepositoryId, state: 'archived', branches: [{ id: scenario.archivedBranchId, state: 'active' }], members: { ...members } },
    ],
    bots: [
      {
        id: scenario.bots.appender.id,
        credentials: [
          { id: scenario.bots.appender.credentialId, state: 'active' },
          { id: scenario.bots.appender.revokedCredentialId, state: 'revoked' },
        ],
        grants: [
          {
            id: scenario.bots.appender.grantId,
            repositoryId: scenario.repositoryId,
            subject: { kind: 'organization', id: scenario.organizationId },
            capabilities: ['room:read', 'message:append'],
            state: 'active',
          },
        ],
      },
      {
        id: scenario.bots.reader.id,
        credentials: [{ id: scenario.bots.reader.credentialId, state: 'active' }],
        grants: [
          {
            id: scenario.bots.reader.grantId,
            repositoryId: scenario.repositoryId,
            subject: { kind: 'user', id: users.writer },
            capabilities: ['room:read'],
            state: 'active',
          },
        ],
      },
    ],
  };
  return { scenario, fixture };
}

/**
 * The fixture of one dev-core, grown by merging: each scenario adds its entries and the union is
 * installed with `PUT /dev/fixture`, so tests sharing a dev-core keep each other's data.
 */
export class SharedFixture {
  private current: Fixture | undefined;

  constructor(private readonly core: DevCoreClient) {}

  async add(part: Fixture): Promise<void> {
    this.current ??= (await this.core.getFixture()) as Fixture;
    const c = this.current;
    // Spread first: fields the factory does not build (apps, installations) stay as installed.
    this.current = {
      ...c,
      users: [...c.users, ...part.users],
      organizations: [...c.organizations, ...part.organizations],
      repositories: [...c.repositories, ...part.repositories],
      bots: [...c.bots, ...part.bots],
      revocations: [...(c.revocations ?? []), ...(part.revocations ?? [])],
    };
    await this.core.putFixture(this.current);
  }

  /** Changes one repository of the installed fixture in place (e.g. archive it) and reinstalls. */
  async updateRepository(repositoryId: string, change: (repository: FixtureRepository) => void): Promise<void> {
    this.current ??= (await this.core.getFixture()) as Fixture;
    const repository = this.current.repositories.find((r) => r.id === repositoryId);
    if (!repository) throw new Error(`no repository ${repositoryId} in the fixture`);
    change(repository);
    await this.core.putFixture(this.current);
  }

  /** Changes the bots of the installed fixture in place (e.g. revoke a credential) and reinstalls. */
  async updateBots(change: (bots: FixtureBot[]) => void): Promise<void> {
    this.current ??= (await this.core.getFixture()) as Fixture;
    change(this.current.bots);
    await this.core.putFixture(this.current);
  }

  /** Creates and installs a fresh scenario. */
  async scenario(): Promise<Scenario> {
    const { scenario, fixture } = buildScenario();
    await this.add(fixture);
    return scenario;
  }
}
