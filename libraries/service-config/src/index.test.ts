import { expect } from 'chai';
import { z } from 'zod';
import { assertSafeOutsideDevelopment, ConfigError, databaseConfigOf, DEVELOPMENT_SERVICE_TOKEN, parseEnv, PLACEHOLDER_MARK, redisConfigOf, renderConfigTable, replaceConfigTable, sharedEnvFields } from './index.ts';

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

  it('reads the Redis deployment (single by default, cluster or sentinel with seed nodes) and refuses settings that do not fit', () => {
    expect(redisConfigOf(parseEnv(schema, { REDIS_URL: 'redis://r:6379' }))).to.include({ url: 'redis://r:6379', mode: 'single' });
    const cluster = redisConfigOf(parseEnv(schema, { REDIS_URL: 'redis://a:7000', REDIS_MODE: 'cluster', REDIS_SEED_NODES: 'b:7001, c:7002' }));
    expect(cluster).to.deep.include({ mode: 'cluster', seedNodes: ['b:7001', 'c:7002'] });
    expect(redisConfigOf(parseEnv(schema, { REDIS_URL: 'redis://s:26379', REDIS_MODE: 'sentinel', REDIS_SENTINEL_NAME: 'chat' }))).to.include({ sentinelName: 'chat' });
    expect(() => parseEnv(schema, { REDIS_MODE: 'sharded' })).to.throw(/REDIS_MODE/);
    expect(() => parseEnv(schema, { REDIS_SEED_NODES: 'b' })).to.throw(/REDIS_SEED_NODES/);
    expect(() => redisConfigOf(parseEnv(schema, { REDIS_MODE: 'cluster' }))).to.throw(ConfigError, /REDIS_URL: required/);
    expect(() => redisConfigOf(parseEnv(schema, { REDIS_URL: 'redis://r:6379', REDIS_SEED_NODES: 'b:1' }))).to.throw(ConfigError, /REDIS_SEED_NODES/);
    expect(() => redisConfigOf(parseEnv(schema, { REDIS_URL: 'redis://a:7000/2', REDIS_MODE: 'cluster' }))).to.throw(ConfigError, /database/);
    expect(() => redisConfigOf(parseEnv(schema, { REDIS_URL: 'http://a:7000' }))).to.throw(ConfigError, /redis:\/\//);
  });

  it('maps DATABASE_POOLER into the database config, `none` by default, and refuses other pooling modes', () => {
    expect(databaseConfigOf(parseEnv(schema, {})).pooler).to.equal('none');
    expect(databaseConfigOf(parseEnv(schema, { DATABASE_POOLER: 'transaction' })).pooler).to.equal('transaction');
    expect(() => parseEnv(schema, { DATABASE_POOLER: 'statement' })).to.throw(/DATABASE_POOLER/);
  });

  it('migrates at start unless MIGRATE_ON_START is false', () => {
    expect(databaseConfigOf(parseEnv(schema, {})).migrateOnStart).to.equal(true);
    expect(databaseConfigOf(parseEnv(schema, { MIGRATE_ON_START: 'false' })).migrateOnStart).to.equal(false);
    expect(() => parseEnv(schema, { MIGRATE_ON_START: 'no' })).to.throw(ConfigError, /MIGRATE_ON_START/);
  });

  it("refuses every placeholder of the Secret template, naming each variable and never its value", () => {
    // The values of infra/k8s/secrets/secret.example.yaml, and a bare mark.
    const template = {
      DATABASE_URL: 'postgres://chat:REPLACE_ME@postgres-primary.databases.svc.cluster.local:5432/chat?sslmode=require',
      REDIS_URL: 'redis://:REPLACE_ME@redis-primary.databases.svc.cluster.local:6379',
      CORE_SERVICE_TOKEN: 'REPLACE_ME_core_service_token',
      CURSOR_SECRET: 'REPLACE_ME_with_at_least_32_random_characters',
      CURSOR_SECRETS_PREVIOUS: `${'x'.repeat(32)},REPLACE_ME`,
    };
    let message = '';
    try {
      parseEnv(schema, template);
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      message = (err as Error).message;
    }
    for (const variable of Object.keys(template)) expect(message).to.contain(`${variable}: holds a placeholder of the Secret template (${PLACEHOLDER_MARK})`);
    expect(message).not.to.contain('postgres-primary');
    expect(message).not.to.contain('REPLACE_ME_with');
    // Named once: the short placeholder token fails no second, schema-level message.
    expect(message.match(/CORE_SERVICE_TOKEN:/g)).to.have.length(1);
    expect(() => parseEnv(schema, { CORE_SERVICE_TOKEN: 'REPLACE_ME' })).to.throw(ConfigError, /^Invalid configuration: CORE_SERVICE_TOKEN: holds a placeholder/);
  });

  it('leaves a placeholder in a variable the schema does not read alone, and accepts real values', () => {
    const env = parseEnv(schema, { SOMETHING_ELSE: 'REPLACE_ME', CURSOR_SECRET: 'r'.repeat(40), CORE_SERVICE_TOKEN: 'a-real-credential-0123456789' });
    expect(env.CURSOR_SECRET).to.equal('r'.repeat(40));
  });

  it('refuses a Redis key prefix with hash-tag braces', () => {
    expect(() => parseEnv(schema, { REDIS_KEY_PREFIX: 'a{b}' })).to.throw(/REDIS_KEY_PREFIX/);
  });
});

describe('safety outside development mode', () => {
  it('refuses the public development token and plain-http core off loopback, naming the setting', () => {
    expect(() => assertSafeOutsideDevelopment({ developmentMode: false, serviceToken: DEVELOPMENT_SERVICE_TOKEN })).to.throw(ConfigError, /CORE_SERVICE_TOKEN/);
    expect(() => assertSafeOutsideDevelopment({ developmentMode: false, coreUrl: 'http://core.example:8080', serviceToken: 'x'.repeat(20) })).to.throw(ConfigError, /CORE_URL/);
  });

  it('accepts https, loopback http, and anything in development mode', () => {
    const token = 'a-real-credential-0123456789';
    for (const coreUrl of ['https://core.example', 'http://127.0.0.1:8081', 'http://localhost:1', 'http://[::1]:80']) {
      expect(() => assertSafeOutsideDevelopment({ developmentMode: false, coreUrl, serviceToken: token }), coreUrl).not.to.throw();
    }
    expect(() => assertSafeOutsideDevelopment({ developmentMode: true, coreUrl: 'http://core.example', serviceToken: DEVELOPMENT_SERVICE_TOKEN })).not.to.throw();
  });
});

describe('configuration table', () => {
  it('lists each variable once with its default and every service that reads it', () => {
    const a = z.object({ X: z.coerce.number().default(3).describe('the x'), Y: z.string().optional().describe('the y') });
    const b = z.object({ X: z.coerce.number().default(3).describe('the x') });
    const table = renderConfigTable([{ service: 'a', schema: a }, { service: 'b', schema: b }]);
    expect(table).to.contain('| `X` | `3` | a, b | the x |');
    expect(table).to.contain('| `Y` | unset | a | the y |');
    expect(replaceConfigTable(`before\n${table}\nafter`, table)).to.equal(`before\n${table}\nafter`);
  });

  it("gives each service's default where they differ", () => {
    const a = z.object({ X: z.string().default('lo').describe('the x') });
    const b = z.object({ X: z.string().default('all').describe('the x') });
    const c = z.object({ X: z.string().default('all').describe('the x') });
    const table = renderConfigTable([{ service: 'a', schema: a }, { service: 'b', schema: b }, { service: 'c', schema: c }]);
    expect(table).to.contain('| `X` | `lo` (a); `all` (b, c) | a, b, c | the x |');
  });

  it('refuses a field without a description', () => {
    expect(() => renderConfigTable([{ service: 'a', schema: z.object({ X: z.string() }) }])).to.throw(/X has no description/);
  });
});
