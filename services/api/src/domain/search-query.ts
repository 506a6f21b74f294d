/**
 * The search extension's query language (docs/interface.md, "Extensions": search), parsed into what
 * the store matches. Free words and "exact phrases" must all be found; filters narrow:
 * `from:<principal ID>` (any of several), `mentions:<principal ID>` (all of several),
 * `in:repository` or `in:<branch ULID>`, `before:`/`after:` an ISO 8601 date or date-time,
 * `has:code`, `has:link`. Only those six names are filters: any other `name:value` (a URL,
 * `std::vector`, `file.ts:42`) is a word. Words and phrases are matched with ASCII letters lowercased
 * and whitespace joined, as the store keeps message text (libraries/store/sql/functions/chat_message_search_text.sql).
 */
import { AppError, isCanonicalUlid } from '@chat/contracts';

export const MAX_QUERY_LENGTH = 512;
/** Words and phrases in one query: each is one more index condition. */
export const MAX_QUERY_NEEDLES = 16;

const PRINCIPAL_ID = /^[A-Za-z0-9._:@-]{1,128}$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const FILTER = /^(from|mentions|in|before|after|has):(.*)$/is;

export interface ParsedSearchQuery {
  terms: string[];
  phrases: string[];
  senderIds: string[];
  mentionIds: string[];
  /** `in:` — absent: not given; null: the repository room; a branch ID: that branch's room. */
  branchId?: string | null;
  before?: Date;
  after?: Date;
  hasCode: boolean;
  hasLink: boolean;
}

export type SearchOrder = 'relevance' | 'newest';

/** `q` as the query language reads it; REQUEST_INVALID (400) for anything it cannot. */
export function parseSearchQuery(raw: unknown): ParsedSearchQuery {
  if (typeof raw !== 'string' || raw.trim().length === 0) throw invalid('q is required: the words and filters to search for.');
  if (raw.length > MAX_QUERY_LENGTH) throw invalid(`q is longer than ${MAX_QUERY_LENGTH} characters.`);
  const parsed: ParsedSearchQuery = { terms: [], phrases: [], senderIds: [], mentionIds: [], hasCode: false, hasLink: false };
  for (const token of tokens(raw)) {
    if (token.quoted) {
      const phrase = normalize(token.text);
      if (phrase.length === 0) throw invalid('q holds an empty phrase ("").');
      // A quoted single word is that word.
      (phrase.includes(' ') ? parsed.phrases : parsed.terms).push(phrase);
      continue;
    }
    const filter = FILTER.exec(token.text);
    if (filter) applyFilter(parsed, filter[1]!.toLowerCase(), filter[2]!);
    else parsed.terms.push(normalize(token.text));
  }
  if (parsed.terms.length + parsed.phrases.length > MAX_QUERY_NEEDLES) throw invalid(`q holds more than ${MAX_QUERY_NEEDLES} words and phrases.`);
  return parsed;
}

/** `order`: `relevance` (the default) or `newest`. */
export function parseSearchOrder(raw: unknown): SearchOrder {
  if (raw === undefined) return 'relevance';
  if (raw === 'relevance' || raw === 'newest') return raw;
  throw invalid('order must be relevance or newest.');
}

/**
 * ASCII letters lowercased, every run of ASCII whitespace one space, as the store keeps message text
 * (whatever the database's locale): other letters match as typed.
 */
export function normalize(text: string): string {
  return text
    .replace(/[A-Z]/g, (c) => c.toLowerCase())
    .replace(/[ \t\n\r\f\v]+/g, ' ')
    .replace(/^ | $/g, '');
}

function* tokens(q: string): Generator<{ text: string; quoted: boolean }> {
  let at = 0;
  while (at < q.length) {
    if (/\s/.test(q[at]!)) {
      at++;
      continue;
    }
    if (q[at] === '"') {
      const end = q.indexOf('"', at + 1);
      if (end < 0) throw invalid('q has a phrase without its closing quote (").');
      yield { text: q.slice(at + 1, end), quoted: true };
      at = end + 1;
      continue;
    }
    let end = at;
    while (end < q.length && !/\s/.test(q[end]!)) end++;
    yield { text: q.slice(at, end), quoted: false };
    at = end;
  }
}

function applyFilter(parsed: ParsedSearchQuery, name: string, value: string): void {
  if (value.length === 0) throw invalid(`${name}: needs a value.`);
  switch (name) {
    case 'from':
    case 'mentions':
      if (!PRINCIPAL_ID.test(value)) throw invalid(`${name}: takes a principal ID.`);
      (name === 'from' ? parsed.senderIds : parsed.mentionIds).push(value);
      return;
    case 'in': {
      if (parsed.branchId !== undefined) throw invalid('q holds more than one in: filter.');
      if (value.toLowerCase() === 'repository') parsed.branchId = null;
      else if (isCanonicalUlid(value)) parsed.branchId = value;
      else throw invalid('in: takes repository or a branch ID (a canonical ULID).');
      return;
    }
    case 'before':
    case 'after': {
      if (parsed[name] !== undefined) throw invalid(`q holds more than one ${name}: filter.`);
      parsed[name] = parseInstant(name, value);
      return;
    }
    case 'has': {
      const what = value.toLowerCase();
      if (what === 'code') parsed.hasCode = true;
      else if (what === 'link') parsed.hasLink = true;
      else throw invalid('has: takes code or link.');
      return;
    }
  }
}

/** A date is its first instant in UTC; a date-time must name its offset. */
function parseInstant(name: string, value: string): Date {
  const text = ISO_DATE.test(value) ? `${value}T00:00:00Z` : ISO_DATE_TIME.test(value) ? value : undefined;
  const instant = text === undefined ? undefined : new Date(text);
  // A calendar-impossible date (2026-02-30) rolls over in Date; its ISO form tells.
  if (!instant || Number.isNaN(instant.getTime()) || (ISO_DATE.test(value) && instant.toISOString().slice(0, 10) !== value)) {
    throw invalid(`${name}: takes an ISO 8601 date (2026-01-31) or date-time with its offset (2026-01-31T09:00:00Z).`);
  }
  return instant;
}

function invalid(message: string): AppError {
  return new AppError('REQUEST_INVALID', message);
}
