/**
 * The labelled queries of the search relevance set (relevance-queries.json) and the oracle that
 * checks their labels: each message a query is labelled with must match it by the rules of
 * docs/interface.md ("Extensions", search), read here independently of the service's code. A label
 * that fails the oracle is a mistake in the data, not in the search.
 */
import { readFileSync } from 'node:fs';
import { SENDERS, type CorpusMessage, type RoomName, type SenderName } from './corpus-generator.ts';
import { ROOMS } from './corpus-vocabulary.ts';

export const QUERY_KINDS = [
  'identifier', 'camelCase part', 'snake part', 'path', 'dotted name', 'URL', 'commit prefix', 'code text', 'partial word', 'phrase', 'prose words', 'filter',
] as const;
export type QueryKind = (typeof QUERY_KINDS)[number];

export interface LabelledQuery {
  kind: QueryKind;
  /**
   * The query as typed, with placeholders: `{alice}` … `{ci}` a sender's principal ID, `{feature-auth}`
   * … a branch's ID, `{t1}` … `{t3}` the instant epoch 1 … 3 of the corpus starts.
   */
  q: string;
  /** What the developer typing it looks for. */
  want: string;
  /** Keys of the planted messages that are what they look for. */
  relevant: string[];
  /**
   * When what they look for is every message about something the background talks about too: the
   * text (lowercased) that makes a background message the query matches relevant as well.
   */
  backgroundHolding?: string;
  /** A single-room search (searchRepositoryRoom for `repository`, else searchBranchRoom); absent, searchRepository. */
  room?: RoomName;
}

export function labelledQueries(path = new URL('./relevance-queries.json', import.meta.url)): LabelledQuery[] {
  const queries = JSON.parse(readFileSync(path, 'utf8')) as LabelledQuery[];
  for (const query of queries) {
    if (!(QUERY_KINDS as readonly string[]).includes(query.kind)) throw new Error(`query ${query.q}: unknown kind ${query.kind}`);
    if (query.relevant.length === 0 || query.relevant.length > 20) throw new Error(`query ${query.q}: 1 to 20 relevant messages, not ${query.relevant.length}`);
  }
  return queries;
}

/**
 * The corpus keys a query looks for: its planted messages and, with `backgroundHolding`, every
 * background message it matches that holds that text.
 */
export function relevantKeys(query: LabelledQuery, corpus: readonly CorpusMessage[]): string[] {
  const holding = query.backgroundHolding;
  if (holding === undefined) return query.relevant;
  const background = corpus.filter((m) => !m.planted && m.body.toLowerCase().includes(holding) && matchesQuery(query, m));
  return [...query.relevant, ...background.map((m) => m.key)];
}

/** What a query's placeholders stand for in one deployment. */
export interface PlaceholderValues {
  principalIds: Record<SenderName, string>;
  branchIds: Record<Exclude<RoomName, 'repository'>, string>;
  /** `epochStarts[k]`: an instant after every message of epoch k - 1 and at or before every one of epoch k. */
  epochStarts: string[];
}

export function resolvePlaceholders(q: string, values: PlaceholderValues): string {
  return q.replace(/\{([a-z0-9-]+)\}/g, (whole, name: string) => {
    if ((SENDERS as readonly string[]).includes(name)) return values.principalIds[name as SenderName];
    if (name in values.branchIds) return values.branchIds[name as keyof PlaceholderValues['branchIds']];
    const epoch = /^t(\d)$/.exec(name);
    if (epoch && values.epochStarts[Number(epoch[1])]) return values.epochStarts[Number(epoch[1])]!;
    throw new Error(`query ${q}: unknown placeholder ${whole}`);
  });
}

/**
 * Whether `message` matches `query` as the interface describes search: every word and phrase a
 * substring of the body with ASCII letters lowercased and whitespace runs joined; filters by sender,
 * mention, room, epoch, code (a pair of backticks) and link (an http:// or https:// URL).
 */
export function matchesQuery(query: LabelledQuery, message: CorpusMessage): boolean {
  if (query.room !== undefined && message.room !== query.room) return false;
  const text = normalize(message.body);
  const senders: string[] = [];
  for (const token of tokens(query.q)) {
    if (token.quoted) {
      if (!text.includes(normalize(token.text))) return false;
      continue;
    }
    const filter = /^(from|mentions|in|before|after|has):(.*)$/i.exec(token.text);
    if (!filter) {
      if (!text.includes(normalize(token.text))) return false;
      continue;
    }
    const [, name, value] = filter as unknown as [string, string, string];
    const placeholder = /^\{(.+)\}$/.exec(value)?.[1];
    switch (name.toLowerCase()) {
      case 'from':
        senders.push(placeholder!);
        break;
      case 'mentions':
        if (!message.mentions.includes(placeholder as SenderName)) return false;
        break;
      case 'in':
        if ((value.toLowerCase() === 'repository' ? 'repository' : placeholder) !== message.room) return false;
        break;
      case 'before':
        if (message.epoch >= epochOf(placeholder)) return false;
        break;
      case 'after':
        if (message.epoch < epochOf(placeholder)) return false;
        break;
      case 'has':
        if (value === 'code' && !/`[^]*`/.test(message.body)) return false;
        if (value === 'link' && !/https?:\/\/./.test(message.body)) return false;
        break;
    }
  }
  return senders.length === 0 || senders.includes(message.sender);
}

function epochOf(placeholder: string | undefined): number {
  const epoch = /^t(\d)$/.exec(placeholder ?? '');
  if (!epoch) throw new Error(`before:/after: take an epoch placeholder ({t1}…), not ${placeholder}`);
  return Number(epoch[1]);
}

function normalize(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase()).replace(/[ \t\n\r\f\v]+/g, ' ').trim();
}

function tokens(q: string): Array<{ text: string; quoted: boolean }> {
  return [...q.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => (m[1] !== undefined ? { text: m[1], quoted: true } : { text: m[2]!, quoted: false }));
}

/** The branch rooms of the corpus, by name. */
export const BRANCH_ROOMS = ROOMS.filter((r): r is Exclude<RoomName, 'repository'> => r !== 'repository');
