export { startDevCore, type DevCoreHandle, type StartDevCoreOptions } from './server.ts';
export { loadConfig, DEFAULT_SERVICE_TOKEN, DevCoreEnvSchema, type DevCoreConfig } from './config.ts';
export { TokenEnvSchema } from './token-config.ts';
export { DEMO_FIXTURE_PATH, FixtureInvalidError } from './domain/fixture-store.ts';
export { fixtureSchema, type Fixture } from './domain/fixture.schema.ts';
export { TOKEN_TYPES, TokenRequestInvalidError, type MintTokenRequest, type TokenType } from './domain/token-minter.ts';
export type { FaultSettings } from './domain/fault-state.ts';
