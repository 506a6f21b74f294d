import { QUERY_KINDS, type LabelledQuery, type QueryKind } from './relevance-queries.ts';

/** One query's answer: the corpus keys of the results, best first, and of what it looks for. */
export interface QueryOutcome {
  query: LabelledQuery;
  relevant: string[];
  ranked: string[];
}

export interface Scores {
  queries: number;
  /** Mean over queries of the share of relevant messages in the top k. */
  recall: number;
  /** Mean over queries of 1 / the rank of the first relevant message in the top k (0 when none is). */
  mrr: number;
}

export function recallAt(outcome: QueryOutcome, k: number): number {
  const top = new Set(outcome.ranked.slice(0, k));
  return outcome.relevant.filter((key) => top.has(key)).length / Math.min(k, outcome.relevant.length);
}

export function reciprocalRank(outcome: QueryOutcome, k: number): number {
  const rank = outcome.ranked.slice(0, k).findIndex((key) => outcome.relevant.includes(key));
  return rank < 0 ? 0 : 1 / (rank + 1);
}

export function scores(outcomes: QueryOutcome[], k: number): Scores {
  const mean = (f: (o: QueryOutcome) => number) => (outcomes.length === 0 ? Number.NaN : outcomes.reduce((sum, o) => sum + f(o), 0) / outcomes.length);
  return { queries: outcomes.length, recall: mean((o) => recallAt(o, k)), mrr: mean((o) => reciprocalRank(o, k)) };
}

/** Overall and per-kind recall@k and MRR as a Markdown table, then every query that missed a relevant message. */
export function relevanceReport(label: string, outcomes: QueryOutcome[], k: number): string {
  const row = (name: string, s: Scores) => `| ${name} | ${s.queries} | ${s.recall.toFixed(3)} | ${s.mrr.toFixed(3)} |`;
  const lines = [`search relevance, ${label}: recall@${k} and MRR (order=relevance, limit=${k})`, '', `| kind | queries | recall@${k} | MRR |`, '|---|---|---|---|'];
  lines.push(row('all', scores(outcomes, k)));
  for (const kind of QUERY_KINDS) lines.push(row(kind, scores(outcomes.filter((o) => o.query.kind === (kind as QueryKind)), k)));
  const misses = outcomes.filter((o) => recallAt(o, k) < 1);
  if (misses.length > 0) {
    lines.push('', 'queries that missed a relevant message:');
    for (const o of misses) {
      const wanted = o.relevant.length > 6 ? `${o.relevant.slice(0, 6).join(', ')}, … (${o.relevant.length})` : o.relevant.join(', ');
      lines.push(`  [${o.query.kind}] ${o.query.q}: wants ${wanted}; got ${o.ranked.slice(0, 5).join(', ') || 'nothing'}${o.ranked.length > 5 ? ', …' : ''}`);
    }
  }
  return lines.join('\n');
}
