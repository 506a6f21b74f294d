import { AppError } from '@chat/contracts';
import { createStore, migrate, openDatabase, type Database } from '@chat/store';
import { expect } from 'chai';
import { AppendRateWindow, type AppendRateKey, type AppendRateSettings, type RateUnit } from './append-rate-window.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The start of a window far from any other test's windows, so budgets never meet across runs. */
function windowStart(windowSeconds: number): number {
  const windowMs = windowSeconds * 1000;
  return (Math.floor(Date.now() / windowMs) + 1 + Math.floor(Math.random() * 1_000_000)) * windowMs;
}

let senderSeq = 0;
function freshKey(overrides: Partial<AppendRateKey> = {}): AppendRateKey {
  senderSeq += 1;
  return { senderKind: 'user', senderId: `u_${process.pid}_${Date.now()}_${senderSeq}`, roomScopeKey: 'repo:01J0000000000000000000000A', ...overrides };
}

/** Takes a unit and returns the AppError it threw, or undefined when it was allowed. */
async function attempt(window: AppendRateWindow, key: AppendRateKey, nowMs: number): Promise<AppError | undefined> {
  try {
    await window.take(key, nowMs);
    return undefined;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
}

const targets: Array<{ name: string; open(): Promise<Database> }> = [
  { name: 'postgres', open: () => openDatabase({ kind: 'postgres', url: DATABASE_URL, poolSize: 8 }) },
  { name: 'pglite', open: () => openDatabase({ kind: 'pglite' }) },
];

for (const target of targets) {
  describe(`append rate window (${target.name})`, function () {
    this.timeout(60_000);
    let database: Database;
    const windowWith = (settings: AppendRateSettings) => new AppendRateWindow(createStore(database).rateWindows, settings);

    before(async () => {
      database = await target.open();
      await migrate(database);
    });
    after(async () => database?.close());

    it('allows `limit` units in a window, then answers 429 RATE_LIMITED with whole seconds until the reset', async () => {
      const start = windowStart(10);
      const window = windowWith({ limit: 3, windowSeconds: 10, scope: 'sender-room' });
      const key = freshKey();
      for (let i = 0; i < 3; i += 1) expect(await attempt(window, key, start + 2_500)).to.equal(undefined);
      const refused = await attempt(window, key, start + 2_500);
      expect(refused?.code).to.equal('RATE_LIMITED');
      expect(refused?.status).to.equal(429);
      expect(refused?.retryAfterSeconds).to.equal(8);
    });

    it('rounds a part second left in the window up to a Retry-After of 1, never 0', async () => {
      const start = windowStart(5);
      const window = windowWith({ limit: 1, windowSeconds: 5, scope: 'sender-room' });
      const key = freshKey();
      await window.take(key, start + 4_999);
      expect((await attempt(window, key, start + 4_999))?.retryAfterSeconds).to.equal(1);
    });

    it('starts a fresh budget when the next aligned window begins', async () => {
      const start = windowStart(10);
      const window = windowWith({ limit: 2, windowSeconds: 10, scope: 'sender-room' });
      const key = freshKey();
      await window.take(key, start + 9_000);
      await window.take(key, start + 9_000);
      expect((await attempt(window, key, start + 9_999))?.code).to.equal('RATE_LIMITED');
      expect(await attempt(window, key, start + 10_000)).to.equal(undefined);
      expect(await attempt(window, key, start + 10_000)).to.equal(undefined);
      expect((await attempt(window, key, start + 10_000))?.retryAfterSeconds).to.equal(10);
    });

    it('counts a request from a clock that is behind in the newest window its budget has seen', async () => {
      const start = windowStart(10);
      const window = windowWith({ limit: 2, windowSeconds: 10, scope: 'sender-room' });
      const key = freshKey();
      await window.take(key, start + 10_500);
      // Another instance, a second behind, still in the window before: it counts in the newer one.
      await window.take(key, start + 9_500);
      expect((await attempt(window, key, start + 10_600))?.code).to.equal('RATE_LIMITED');
      expect((await attempt(window, key, start + 9_600))?.code).to.equal('RATE_LIMITED');
    });

    it('with scope sender-room, gives each sender a budget per room, and users and bots separate budgets', async () => {
      const now = windowStart(60) + 1_000;
      const window = windowWith({ limit: 1, windowSeconds: 60, scope: 'sender-room' });
      const key = freshKey();
      await window.take(key, now);
      expect((await attempt(window, key, now))?.code).to.equal('RATE_LIMITED');
      expect(await attempt(window, { ...key, roomScopeKey: `${key.roomScopeKey}:branch:01J0000000000000000000000B` }, now)).to.equal(undefined);
      expect(await attempt(window, { ...key, senderKind: 'bot' }, now)).to.equal(undefined);
      expect(await attempt(window, freshKey({ roomScopeKey: key.roomScopeKey }), now)).to.equal(undefined);
    });

    it('with scope sender, shares one budget across every room', async () => {
      const now = windowStart(60) + 1_000;
      const window = windowWith({ limit: 2, windowSeconds: 60, scope: 'sender' });
      const key = freshKey();
      await window.take({ ...key, roomScopeKey: 'room-a' }, now);
      await window.take({ ...key, roomScopeKey: 'room-b' }, now);
      expect((await attempt(window, { ...key, roomScopeKey: 'room-c' }, now))?.code).to.equal('RATE_LIMITED');
    });

    it('takes a unit given back into its window, once, so the budget allows one more', async () => {
      const now = windowStart(60) + 1_000;
      const window = windowWith({ limit: 2, windowSeconds: 60, scope: 'sender-room' });
      const key = freshKey();
      await window.take(key, now);
      const unit = await window.take(key, now);
      expect((await attempt(window, key, now))?.code).to.equal('RATE_LIMITED');
      await unit.giveBack();
      await unit.giveBack();
      expect(await attempt(window, key, now)).to.equal(undefined);
      expect((await attempt(window, key, now))?.code).to.equal('RATE_LIMITED');
    });

    it('never moves a unit given back into a later window, nor into another budget', async () => {
      const start = windowStart(60);
      const window = windowWith({ limit: 1, windowSeconds: 60, scope: 'sender-room' });
      const key = freshKey();
      const other = freshKey({ roomScopeKey: key.roomScopeKey });
      const old = await window.take(key, start + 58_500);
      const others = await window.take(other, start + 58_500);
      await window.take(key, start + 60_000);
      await old.giveBack();
      expect((await attempt(window, key, start + 60_000))?.code).to.equal('RATE_LIMITED');
      await others.giveBack();
      expect((await attempt(window, key, start + 60_000))?.code).to.equal('RATE_LIMITED');
    });

    it('lets exactly `limit` through when many takes race in one window, and frees exactly the units given back', async () => {
      const now = windowStart(60) + 1_000;
      const window = windowWith({ limit: 10, windowSeconds: 60, scope: 'sender-room' });
      const key = freshKey();
      const outcomes = await Promise.all(
        Array.from({ length: 40 }, async (): Promise<RateUnit | AppError> => {
          try {
            return await window.take(key, now);
          } catch (err) {
            return err as AppError;
          }
        }),
      );
      const units = outcomes.filter((o): o is RateUnit => !(o instanceof AppError));
      expect(units).to.have.length(10);
      expect(outcomes.filter((o) => o instanceof AppError && o.code === 'RATE_LIMITED')).to.have.length(30);
      await Promise.all(units.slice(0, 5).map((u) => u.giveBack()));
      const again = await Promise.all(Array.from({ length: 8 }, () => attempt(window, key, now)));
      expect(again.filter((o) => o === undefined)).to.have.length(5);
    });

    // On the embedded database only: a sweep on the shared PostgreSQL would take other suites' rows.
    if (target.name === 'pglite') {
      it('sweeps the rows of ended windows and keeps the current ones', async () => {
        const start = windowStart(60);
        const window = windowWith({ limit: 1, windowSeconds: 60, scope: 'sender-room' });
        const ended = freshKey();
        const current = freshKey();
        await window.take(ended, start + 1_000);
        await window.take(current, start + 61_000);
        await window.sweep(start + 61_000, 1);
        // The ended window's row went, so its budget starts afresh even from its old window's clock.
        expect(await attempt(window, ended, start + 1_000)).to.equal(undefined);
        expect((await attempt(window, current, start + 61_000))?.code).to.equal('RATE_LIMITED');
      });
    }
  });
}
