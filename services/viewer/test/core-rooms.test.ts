import { expect } from 'chai';
import { configuredRepositories, filterRooms, landingRoom, roomTitle, type CoreRepository } from '../src/app/core-rooms.ts';
import { branchNameHash, parseBranchNameHash, parseHash } from '../src/app/route.ts';

const WEB = '01JGFJJZ00QNYBVPQTAT49MN0F';
const MAIN = '01JGFJJZZ89S40WZVASPCBT80G';
const OLD = '01JGFJK0YGB83273JNJF879N0A';
const LEGACY = '01JGFJK1XRGVD3BX64YJ5R47M7';
const NAMELESS = '01JGFJK3W8GE2RMDX78EQVVVR6';

const LIST: CoreRepository[] = [
  { id: WEB, name: 'acme/web', state: 'active', role: 'write', branches: [{ id: OLD, name: 'feature/old-login', state: 'deleted' }, { id: MAIN, name: 'main', state: 'active' }] },
  { id: NAMELESS, name: null, state: 'active', role: 'read', branches: [] },
  { id: LEGACY, name: 'acme/legacy', state: 'archived', role: 'write', branches: [] },
];

describe('rooms from core', () => {
  it('filters repositories and branches by name, ignoring case: a matching repository keeps all its branches', () => {
    const shown = (text: string) => filterRooms(LIST, text).map(({ repository, branches }) => [repository.name, ...branches.map((b) => b.name)]);
    expect(shown('')).to.deep.equal([['acme/web', 'feature/old-login', 'main'], [null], ['acme/legacy']]);
    expect(shown(' MAIN ')).to.deep.equal([['acme/web', 'main']]);
    expect(shown('web')).to.deep.equal([['acme/web', 'feature/old-login', 'main']]);
    expect(shown('legacy')).to.deep.equal([['acme/legacy']]);
    // A nameless repository is found by the short ID it is shown with.
    expect(shown('vvvr6')).to.deep.equal([[null]]);
    expect(shown('nothing')).to.deep.equal([]);
  });

  it('titles a room by its names, and by short IDs for a room core did not list', () => {
    expect(roomTitle(LIST, { repositoryId: WEB, branchId: MAIN })).to.deep.equal({ repository: 'acme/web', branch: 'main' });
    expect(roomTitle(LIST, { repositoryId: WEB, branchId: null })).to.deep.equal({ repository: 'acme/web', branch: undefined });
    expect(roomTitle(LIST, { repositoryId: NAMELESS, branchId: null }).repository).to.equal('…8EQVVVR6');
    expect(roomTitle(undefined, { repositoryId: WEB, branchId: MAIN })).to.deep.equal({ repository: '…AT49MN0F', branch: '…SPCBT80G' });
  });

  it('lands on the first active repository, not an archived one listed before it', () => {
    expect(landingRoom([LIST[2]!, LIST[0]!])).to.deep.equal({ repositoryId: WEB, branchId: null });
    expect(landingRoom([LIST[2]!])).to.deep.equal({ repositoryId: LEGACY, branchId: null });
    expect(landingRoom([])).to.equal(undefined);
  });

  it('lists the configured rooms, grouped by repository, when core cannot be asked', () => {
    expect(configuredRepositories([{ repositoryId: WEB, label: 'web' }, { repositoryId: WEB, branchId: MAIN, label: 'web · main' }, { repositoryId: LEGACY, branchId: OLD, label: 'old' }])).to.deep.equal([
      { id: WEB, name: 'web', state: 'active', role: 'read', branches: [{ id: MAIN, name: 'web · main', state: 'active' }] },
      { id: LEGACY, name: null, state: 'active', role: 'read', branches: [{ id: OLD, name: 'old', state: 'active' }] },
    ]);
  });

  it('reads a branch named in the address, slashes included, and names no room by it', () => {
    const hash = branchNameHash(WEB, 'feature/old-login');
    expect(hash).to.equal(`#/r/${WEB}/branch/feature%2Fold-login`);
    expect(parseBranchNameHash(hash)).to.deep.equal({ repositoryId: WEB, name: 'feature/old-login' });
    expect(parseHash(hash).room).to.equal(undefined);
    expect(parseBranchNameHash(`#/r/${WEB}/branch/%E0%A4%A`)).to.equal(undefined);
    expect(parseBranchNameHash(`#/r/${WEB}/b/${MAIN}`)).to.equal(undefined);
  });
});
