import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/HTTP JSON export carries it, with its resource's `service.name`. */
export interface ExportedSpan {
  service: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  traceId: string;
  spanId: string;
  /** Undefined for a trace's root span. */
  parentSpanId: string | undefined;
  attributes: Record<string, string | number | boolean>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: number;
  events: string[];
}

export interface OtlpReceiver {
  /** The base URL, for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  url: string;
  /** Export requests received, whatever their path or body. */
  readonly requests: number;
  /** Every span of every export received at `/v1/traces`. */
  spans(): ExportedSpan[];
  close(): Promise<void>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
interface OtlpExport {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<{ key: string; value: OtlpValue }> };
    scopeSpans?: Array<{
      spans?: Array<{
        name: string;
        kind: number;
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        attributes?: Array<{ key: string; value: OtlpValue }>;
        status?: { code?: number };
        events?: Array<{ name: string }>;
      }>;
    }>;
  }>;
}

const valueOf = (v: OtlpValue): string | number | boolean => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue ?? '';
const record = (attributes: Array<{ key: string; value: OtlpValue }> = []) => Object.fromEntries(attributes.map((a) => [a.key, valueOf(a.value)]));

/**
 * A small OTLP/HTTP collector: it answers every export 200 and keeps the spans of the JSON ones
 * (what `@opentelemetry/exporter-trace-otlp-http` sends). `port` 0 picks a free one.
 */
export async function startOtlpReceiver(port = 0, host = '127.0.0.1'): Promise<OtlpReceiver> {
  const spans: ExportedSpan[] = [];
  let requests = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests += 1;
      if (req.url === '/v1/traces' && String(req.headers['content-type']).startsWith('application/json')) {
        const exported = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
        for (const resourceSpans of exported.resourceSpans ?? []) {
          const service = String(record(resourceSpans.resource?.attributes)['service.name'] ?? '');
          for (const scope of resourceSpans.scopeSpans ?? []) {
            for (const s of scope.spans ?? []) {
              spans.push({
                service,
                name: s.name,
                kind: s.kind,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId || undefined,
                attributes: record(s.attributes),
                status: s.status?.code ?? 0,
                events: (s.events ?? []).map((e) => e.name),
              });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(port, host);
  await once(server, 'listening');
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}`,
    get requests() {
      return requests;
    },
    spans: () => [...spans],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
