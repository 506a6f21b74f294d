import { OpenApiValidator } from '../harness/openapi-validator.ts';

/** One HTTP exchange the SDK made: the status, or `network` when no answer arrived. */
export interface RecordedCall {
  method: string;
  path: string;
  outcome: number | 'network';
  idempotencyKey: string | undefined;
  lastEventId: string | undefined;
  authorization: string | undefined;
}

const validator = new OpenApiValidator();

/**
 * A `fetch` for the SDK that forwards to the real one and records every exchange, and checks every
 * JSON answer against the committed OpenAPI document (event streams are checked event by event by
 * the tests). Contract violations are collected, not thrown: a throw inside fetch would look like a
 * network failure to the SDK and be retried.
 */
export class FetchRecorder {
  readonly calls: RecordedCall[] = [];
  readonly violations: string[] = [];

  readonly fetch: typeof globalThis.fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const headers = new Headers(init?.headers);
    const call: RecordedCall = {
      method: init?.method ?? 'GET',
      path: url.pathname + url.search,
      outcome: 'network',
      idempotencyKey: headers.get('idempotency-key') ?? undefined,
      lastEventId: headers.get('last-event-id') ?? undefined,
      authorization: headers.get('authorization') ?? undefined,
    };
    this.calls.push(call);
    const response = await globalThis.fetch(input, init);
    call.outcome = response.status;
    if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      const text = await response.clone().text().catch(() => undefined);
      if (text !== undefined) {
        const problems = validator.problems({
          method: call.method,
          path: call.path,
          status: response.status,
          headers: Object.fromEntries(response.headers.entries()),
          body: text,
        });
        for (const problem of problems) this.violations.push(`${call.method} ${call.path} → ${response.status}: ${problem}`);
      }
    }
    return response;
  };

  /** The calls to `path` (query ignored) with `method`. */
  to(method: string, path: string): RecordedCall[] {
    return this.calls.filter((c) => c.method === method && c.path.split('?')[0] === path);
  }
}

/** Problems of one stream event's data against its component schema. */
export function eventDataProblems(component: 'MessageResponse' | 'NotificationResponse', data: unknown): string[] {
  return validator.schemaProblems(component, data);
}
