import {
  contractRegistry,
  ErrorEnvelopeSchema,
  FeedNotificationResponseSchema,
  HandoffEventDataSchema,
  HeartbeatEventDataSchema,
  NotificationResponseSchema,
  openApiDocument,
  ReauthorizeEventDataSchema,
} from '@chat/contracts';
import type { z } from 'zod';
import type { SseClient } from './sse-client.ts';

type Json = Record<string, any>;

/** The component schemas the stream's responses name, by component name; each is checked to be the one registered under that name. */
const COMPONENTS: Record<string, z.ZodType> = {
  NotificationResponse: NotificationResponseSchema,
  FeedNotificationResponse: FeedNotificationResponseSchema,
  HeartbeatEventData: HeartbeatEventDataSchema,
  HandoffEventData: HandoffEventDataSchema,
  ReauthorizeEventData: ReauthorizeEventDataSchema,
  ErrorEnvelope: ErrorEnvelopeSchema,
};

function resolve(value: Json): Json {
  let v = value;
  for (let depth = 0; typeof v?.$ref === 'string' && depth < 10; depth++) {
    v = (v.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .reduce<Json>((at, part) => at[part], openApiDocument);
  }
  return v;
}

function componentOf(schema: Json): z.ZodType {
  const name = /^#\/components\/schemas\/(.+)$/.exec(String(schema.$ref))?.[1];
  const zod = name === undefined ? undefined : COMPONENTS[name];
  if (!zod || contractRegistry.get(zod)?.id !== name) throw new Error(`no contract schema for ${JSON.stringify(schema)}`);
  return zod;
}

/**
 * What the committed OpenAPI document says of `GET /v1/inbox/events` that an answer breaks: an
 * undocumented status, an error body that is not the envelope, an event kind it does not list, a
 * durable event without an id (or a control event with one), event data that is not its component.
 */
export function principalInboxContractProblems(client: SseClient): string[] {
  const operation = (openApiDocument as Json).paths['/v1/inbox/events']?.get as Json | undefined;
  if (!operation || operation.operationId !== 'streamPrincipalInbox' || operation['x-chat-extension'] !== true) return ['streamPrincipalInbox is not a documented extension'];
  const { status, body } = client.response;
  // 405 is the general rule for any other method, not this operation's.
  if (status === 405) return [];
  const documented = operation.responses[String(status)] as Json | undefined;
  if (!documented) return [`status ${status} is not documented`];
  const response = resolve(documented);
  if (status !== 200) {
    const parsed = componentOf(response.content['application/json'].schema).safeParse(body);
    return parsed.success ? [] : [`${status} body: ${parsed.error.message}`];
  }
  const declared = new Map((response['x-sse-events'] as Json[]).map((e) => [e.event as string, e]));
  const problems: string[] = [];
  for (const event of client.events) {
    const declaration = declared.get(event.event ?? 'message');
    if (!declaration) {
      problems.push(`undocumented event ${event.event}`);
      continue;
    }
    if ((declaration.id === 'none') !== (event.id === undefined)) problems.push(`${event.event} event with id ${event.id}`);
    const parsed = componentOf(declaration.data).safeParse(JSON.parse(event.data));
    if (!parsed.success) problems.push(`${event.event} data: ${parsed.error.message}`);
  }
  return problems;
}
