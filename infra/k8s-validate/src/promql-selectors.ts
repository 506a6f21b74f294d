/**
 * The series a PromQL expression reads, parsed with Prometheus' own grammar (@prometheus-io/lezer-promql,
 * the one its web UI uses), so a name inside a string or a label value is never taken for a metric.
 */
import { parser } from '@prometheus-io/lezer-promql';

/** One vector selector of an expression. */
export interface SelectorUse {
  /** The series name (`foo` of `foo{a="b"}`, or a `__name__="foo"` matcher); '' when it names none. */
  name: string;
  /** Its `job="..."` matcher's value, when it has one. */
  job: string | undefined;
  /** The function it is a direct argument of (`rate` of `rate(foo[5m])`), if any. */
  fn: string | undefined;
  /** Every function around it, innermost first (`rate`, `histogram_quantile` ...). */
  enclosing: string[];
}

export type ParsedExpression = { ok: true; selectors: SelectorUse[] } | { ok: false; at: number };

/** Grafana's interval variables stand where PromQL wants a duration: read as one. */
const GRAFANA_DURATIONS = /\$__(rate_interval|interval|range)\b|\$\{__(rate_interval|interval|range)\}/g;

/** Parses `expr` (a rule's, or a dashboard panel's with Grafana's interval variables); `at` is where a syntax error is. */
export function parsePromql(expr: string): ParsedExpression {
  const text = expr.replace(GRAFANA_DURATIONS, '5m');
  const tree = parser.parse(text);
  const cursor = tree.cursor();
  const selectors: SelectorUse[] = [];
  do {
    if (cursor.type.isError) return { ok: false, at: cursor.from };
    if (cursor.name !== 'VectorSelector') continue;
    const node = cursor.node;
    const identifier = node.getChild('Identifier');
    const matchers = labelMatchers(text, node);
    const name = identifier ? text.slice(identifier.from, identifier.to) : (matchers.get('__name__') ?? '');
    const enclosing: string[] = [];
    let fn: string | undefined;
    let direct = true;
    for (let parent = node.parent; parent; parent = parent.parent) {
      if (parent.name === 'FunctionCall') {
        const id = parent.getChild('FunctionIdentifier');
        const called = id ? text.slice(id.from, id.to) : '';
        if (direct) fn = called;
        enclosing.push(called);
        direct = false;
      } else if (parent.name !== 'MatrixSelector' && parent.name !== 'FunctionCallBody') {
        direct = false;
      }
    }
    selectors.push({ name, job: matchers.get('job'), fn, enclosing });
  } while (cursor.next());
  return { ok: true, selectors };
}

/** The equality matchers (`label="value"`) of a vector selector. */
function labelMatchers(text: string, selector: { getChild(name: string): { getChildren(name: string): MatcherNode[] } | null }): Map<string, string> {
  const found = new Map<string, string>();
  for (const matcher of selector.getChild('LabelMatchers')?.getChildren('UnquotedLabelMatcher') ?? []) {
    const label = matcher.getChild('LabelName');
    const op = matcher.getChild('MatchOp');
    const value = matcher.getChild('StringLiteral');
    if (!label || !value || op?.firstChild?.name !== 'EqlSingle') continue;
    found.set(text.slice(label.from, label.to), JSON.parse(text.slice(value.from, value.to).replace(/^'|'$/g, '"')) as string);
  }
  return found;
}

interface MatcherNode {
  getChild(name: string): { from: number; to: number; firstChild?: { name: string } | null } | null;
}
