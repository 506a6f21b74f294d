/**
 * The manifest beside a PGlite template (`<template>.json`): the PGlite version that wrote it, which
 * the database's thread checks, and the migrations in it with a digest of each, checked here against
 * the migration files beside the store: a template made before a migration file changed would
 * otherwise record it as applied with its old text (the sources of a development checkout run the
 * template of its last build).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface PgliteTemplateManifest {
  pglite: string;
  /** Migration file name → SHA-256 of its text. */
  migrations: Record<string, string>;
}

const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));

export function migrationDigests(names: string[]): Record<string, string> {
  return Object.fromEntries(names.map((name) => [name, createHash('sha256').update(readFileSync(MIGRATIONS_DIR + name)).digest('hex')]));
}

/** Throws when the template holds a migration whose file is gone or reads differently now. */
export function checkTemplateMigrations(template: string): void {
  const manifest = JSON.parse(readFileSync(`${template}.json`, 'utf8')) as PgliteTemplateManifest;
  const present = new Set(readdirSync(MIGRATIONS_DIR));
  const recorded = Object.keys(manifest.migrations);
  const current = migrationDigests(recorded.filter((name) => present.has(name)));
  const stale = recorded.filter((name) => current[name] !== manifest.migrations[name]);
  if (stale.length > 0) throw new Error(`the PGlite template holds migrations that differ from this build's: ${stale.join(', ')}`);
}
