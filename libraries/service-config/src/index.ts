/**
 * The one way chat services read their environment: zod fields with descriptions, one parser that
 * names every bad variable, builders of the nested config shapes, the start-up safety check, and the
 * generator of the README's configuration table.
 */
export * from './fields.ts';
export * from './nested.ts';
export * from './tracing.ts';
export { ConfigError, loadConfig, loadConfigOrExit, parseEnv, PLACEHOLDER_MARK } from './parse-env.ts';
export { assertSafeOutsideDevelopment } from './production-safety.ts';
export { renderConfigTable, replaceConfigTable, type ConfigSection } from './config-docs.ts';
export { standaloneServiceConfigOf, type StandaloneServiceConfig } from './standalone.ts';
