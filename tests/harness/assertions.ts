import { expect } from 'chai';
import type { MessageResponse } from '@chat/contracts';
import { errorCode, type ApiResponse } from './api-client.ts';

/** Asserts an error response: status, envelope code (the envelope itself is checked by the client). */
export function expectError(response: ApiResponse, status: number, code: string): void {
  expect({ status: response.status, code: errorCode(response) }, response.text).to.deep.equal({ status, code });
}

/** Asserts a success status, showing the body when it is not. */
export function expectStatus(response: ApiResponse, status: number): void {
  expect(response.status, response.text).to.equal(status);
}

/** Compares two messages by (createdAt, messageId), the spec's order. */
export function compareMessages(a: Pick<MessageResponse, 'createdAt' | 'messageId'>, b: Pick<MessageResponse, 'createdAt' | 'messageId'>): number {
  const ta = Date.parse(a.createdAt);
  const tb = Date.parse(b.createdAt);
  if (ta !== tb) return ta - tb;
  // Same millisecond: the ISO string may carry finer digits, then the ID breaks the tie.
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.messageId < b.messageId ? -1 : a.messageId > b.messageId ? 1 : 0;
}
