import { readFile } from 'node:fs/promises';
import { pino } from 'pino';
import { DEMO_FIXTURE_PATH } from '../src/domain/fixture-store.ts';
import { startDevCore, type DevCoreHandle, type StartDevCoreOptions } from '../src/server.ts';

export const SERVICE_TOKEN = 'test-service-token-0123456789';

/** IDs of the bundled demo fixture that tests rely on. */
export const DEMO = {
  repository: '01JGFJJZ00QNYBVPQTAT49MN0F',
  activeBranch: '01JGFJJZZ89S40WZVASPCBT80G',
  deletedBranch: '01JGFJK0YGB83273JNJF879N0A',
  archivedRepository: '01JGFJK1XRGVD3BX64YJ5R47M7',
  archivedRepositoryBranch: '01JGFJK2X0ENW0FH3C8BEWQVYR',
} as const;

/** The demo fixture as a fresh JSON value, for tests that edit and restore it. */
export async function demoFixture(): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(DEMO_FIXTURE_PATH, 'utf8')) as Record<string, unknown>;
}

/** Starts a silent dev-core on a free port; `options` adds to or overrides the test defaults (a clock, say). */
export function startTestDevCore(options: Partial<StartDevCoreOptions> = {}): Promise<DevCoreHandle> {
  return startDevCore({ port: 0, serviceToken: SERVICE_TOKEN, logger: pino({ level: 'silent' }), ...options });
}

/** Sends JSON to dev-core and returns status and parsed body. */
export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}
