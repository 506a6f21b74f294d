import { SpanKind, type Span } from '@opentelemetry/api';
import { childTracer } from './active-tracer.ts';
import { ATTR_APPEND_BATCH_SIZE, ATTR_APPEND_OUTCOME, ATTR_APPEND_STEP, ATTR_SCOPE_KEY, ATTR_SEQ } from './span-attributes.ts';
import { recordFailure } from './span-failure.ts';

/**
 * One append step's commit as its request sees it: from the moment it is handed to the store's
 * append batcher to its outcome, with an event when the transaction carrying it starts.
 *
 * A transaction carries the steps of several requests, each in its own trace. A span has one parent,
 * so one span for the transaction would sit in one request's trace and leave the others with a
 * link to a trace they are not in; each request's span of its own step shows every trace its own
 * commit (queue wait and transaction, with the batch's size), which is what a slow append's trace
 * is read for.
 */
export interface CommitSpan {
  /** The transaction carrying this step starts, with `steps` steps in all. */
  transactionStarted(steps: number): void;
  /** The statement's answer; `message` for a created one. */
  end(outcome: string, message?: { roomId: string; seq: number }): void;
  /** The transaction failed (nothing of it committed). */
  fail(err: unknown): void;
}

class AppendCommitSpan implements CommitSpan {
  constructor(private readonly span: Span) {}

  transactionStarted(steps: number): void {
    this.span.setAttribute(ATTR_APPEND_BATCH_SIZE, steps);
    this.span.addEvent('transaction started');
  }

  end(outcome: string, message?: { roomId: string; seq: number }): void {
    this.span.setAttribute(ATTR_APPEND_OUTCOME, outcome);
    if (message) {
      this.span.setAttribute(ATTR_SCOPE_KEY, message.roomId);
      this.span.setAttribute(ATTR_SEQ, message.seq);
    }
    this.span.end();
  }

  fail(err: unknown): void {
    recordFailure(this.span, err);
    this.span.end();
  }
}

/**
 * A child span of the active request for one append step (`append commit`, `append hold`); undefined
 * while tracing is off and for an append no traced request made.
 */
export function startCommitSpan(step: 'append' | 'hold'): CommitSpan | undefined {
  const tracer = childTracer();
  if (!tracer) return undefined;
  return new AppendCommitSpan(tracer.startSpan(`append ${step === 'append' ? 'commit' : 'hold'}`, { kind: SpanKind.INTERNAL, attributes: { [ATTR_APPEND_STEP]: step } }));
}
