/**
 * The manifest beside a PGlite template (`<template>.json`): the PGlite version that wrote it, which
 * the database's thread checks, and the checksum of each migration and function file it holds.
 *
 * Migrations are checked here against the migration files beside the store: a template made before
 * a migration file changed would otherwise record it as applied with its old text (the sources of a
 * development checkout run the template of its last build). Function files need no check: the
 * template's `chat_functions` records their checksums, so the first migrate after a start from a
 * template older than a function file applies that file, as on any database.
 */
import { readFileSync } from 'node:fs';
import { sqlFileChecksums, sqlFileNames, STORE_SQL_SOURCES } from './sql-sources.ts';

export interface PgliteTemplateManifest {
  pglite: string;
  /** Migration file name → SHA-256 of its text. */
  migrations: Record<string, string>;
  /** Function file name → SHA-256 of its text, as recorded in the template's `chat_functions`. */
  functions: Record<string, string>;
}

/** Throws when the template holds a migration whose file is gone or reads differently now. */
export function checkTemplateMigrations(template: string): void {
  const manifest = JSON.parse(readFileSync(`${template}.json`, 'utf8')) as PgliteTemplateManifest;
  const { migrationsDir } = STORE_SQL_SOURCES;
  const present = new Set(sqlFileNames(migrationsDir));
  const recorded = Object.keys(manifest.migrations);
  const current = sqlFileChecksums(migrationsDir, recorded.filter((name) => present.has(name)));
  const stale = recorded.filter((name) => current[name] !== manifest.migrations[name]);
  if (stale.length > 0) throw new Error(`the PGlite template holds migrations that differ from this build's: ${stale.join(', ')}`);
}
