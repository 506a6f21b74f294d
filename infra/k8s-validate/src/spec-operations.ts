/**
 * The spec's operations as the committed OpenAPI document declares them, each with a request path
 * that stands for it (its parameters filled with sample IDs), whether it answers an event stream,
 * and the statuses it may answer. The routing rules send each path where its operation is served.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the services' operations are declared, relative to the repository root. */
export const OPENAPI_DOCUMENT = 'clients/contracts/openapi.json';

export interface SpecOperation {
  method: string;
  /** The path template (`/v1/repositories/{repositoryId}/room/events`). */
  template: string;
  /** A request path for it, with sample IDs. */
  path: string;
  /** True when it answers `text/event-stream`: a long-lived stream, served by the gateways. */
  stream: boolean;
  statuses: Set<number>;
}

const SAMPLE_IDS = ['01JGFJJZ00QNYBVPQTAT49MN0F', '01JGFJJZ01ABCDEFGHJKMNPQRS', '01JGFJJZ02ABCDEFGHJKMNPQRS'];

interface OpenApiOperation {
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

/** Every operation of the OpenAPI document, or undefined when the document is missing. */
export function specOperations(repoRoot: string): SpecOperation[] | undefined {
  const file = join(repoRoot, OPENAPI_DOCUMENT);
  if (!existsSync(file)) return undefined;
  const document = JSON.parse(readFileSync(file, 'utf8')) as { paths: Record<string, Record<string, OpenApiOperation>> };
  return Object.entries(document.paths).flatMap(([template, operations]) =>
    Object.entries(operations).map(([method, operation]) => {
      let i = 0;
      const responses = Object.entries(operation.responses ?? {});
      return {
        method: method.toUpperCase(),
        template,
        path: template.replace(/\{[^}]+\}/g, () => SAMPLE_IDS[i++ % SAMPLE_IDS.length]!),
        stream: responses.some(([, r]) => Object.keys(r.content ?? {}).includes('text/event-stream')),
        statuses: new Set(responses.map(([status]) => Number(status))),
      };
    }),
  );
}

/**
 * Statuses the services answer themselves: every error status the OpenAPI document declares, plus
 * 404 and 405 for paths and methods that are no operation. The proxy must pass them on untouched.
 */
export function serviceStatuses(operations: SpecOperation[]): Set<number> {
  const statuses = new Set([404, 405]);
  for (const operation of operations) for (const status of operation.statuses) if (status >= 400) statuses.add(status);
  return statuses;
}
