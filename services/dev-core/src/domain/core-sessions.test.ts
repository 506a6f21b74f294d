import { expect } from 'chai';
import { CORE_SESSION_TTL_MS, CoreSessions } from './core-sessions.ts';

describe('dev-core core sessions', () => {
  it('holds at most its cap: opening one more ends the oldest, and the newer ones stay signed in', () => {
    const sessions = new CoreSessions(() => 1_000, 3);
    const tokens = ['u_a', 'u_b', 'u_c', 'u_d', 'u_e'].map((user) => sessions.open(user).token);
    expect(sessions.size).to.equal(3);
    expect(tokens.map((t) => sessions.userOf(t))).to.deep.equal([undefined, undefined, 'u_c', 'u_d', 'u_e']);
  });

  it('sweeps expired sessions when a new one opens, without any of them being looked up', () => {
    let now = 0;
    const sessions = new CoreSessions(() => now, 100);
    for (let i = 0; i < 50; i += 1) sessions.open(`u_${i}`);
    now = CORE_SESSION_TTL_MS / 2;
    const live = sessions.open('u_live').token;
    expect(sessions.size).to.equal(51);
    now = CORE_SESSION_TTL_MS;
    sessions.open('u_next');
    expect(sessions.size, 'the first fifty expired').to.equal(2);
    expect(sessions.userOf(live)).to.equal('u_live');
  });

  it('does not take an expired session', () => {
    let now = 0;
    const sessions = new CoreSessions(() => now);
    const { token } = sessions.open('u_alice');
    now = CORE_SESSION_TTL_MS;
    expect(sessions.userOf(token)).to.equal(undefined);
  });
});
