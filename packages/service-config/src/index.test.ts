import { expect } from 'chai';
import { z } from 'zod';
import { parseEnv, sharedEnvFields } from './index.ts';

describe('service configuration', () => {
  const schema = z.object(sharedEnvFields);

  it('fills every default from an empty environment', () => {
    const env = parseEnv(schema, {});
    expect(env.PORT).to.equal(8080);
    expect(env.DATABASE_URL).to.equal(undefined);
    expect(env.CURSOR_SECRETS_PREVIOUS).to.deep.equal([]);
    expect(env.REDIS_KEY_PREFIX).to.equal('chat');
  });

  it('names every bad variable at once', () => {
    expect(() => parseEnv(schema, { PORT: 'eighty', DATABASE_URL: 'not a url', CURSOR_SECRET: 'short' })).to.throw(
      /PORT: .*; DATABASE_URL: .*; CURSOR_SECRET: /,
    );
  });

  it('splits previous cursor secrets and refuses short ones', () => {
    const long = 'x'.repeat(32);
    expect(parseEnv(schema, { CURSOR_SECRETS_PREVIOUS: `${long}, ${long}y` }).CURSOR_SECRETS_PREVIOUS).to.deep.equal([long, `${long}y`]);
    expect(() => parseEnv(schema, { CURSOR_SECRETS_PREVIOUS: 'short' })).to.throw(/CURSOR_SECRETS_PREVIOUS/);
  });

  it('refuses a Redis key prefix with hash-tag braces', () => {
    expect(() => parseEnv(schema, { REDIS_KEY_PREFIX: 'a{b}' })).to.throw(/REDIS_KEY_PREFIX/);
  });
});
