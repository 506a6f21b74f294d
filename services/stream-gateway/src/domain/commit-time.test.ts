import { expect } from 'chai';
import { commitTimeOf } from './commit-time.ts';

describe('commitTimeOf', () => {
  it("reads a message's createdAt, wherever it stands", () => {
    const message = JSON.stringify({ messageId: 'm', bodyMarkdown: 'x'.repeat(5000), createdAt: '2025-03-01T12:00:00.250Z', renderedHtml: '<p>x</p>' });
    expect(commitTimeOf(message)).to.equal(Date.UTC(2025, 2, 1, 12, 0, 0, 250));
  });

  it("reads a feed entry's notification, not its message", () => {
    const entry = `{"inboxSeq":3,"notification":${JSON.stringify({ notificationId: 'n', createdAt: '2025-03-01T12:00:01.000Z' })},"message":${JSON.stringify({ createdAt: '2025-03-01T11:00:00.000Z' })}}`;
    expect(commitTimeOf(entry)).to.equal(Date.UTC(2025, 2, 1, 12, 0, 1));
  });

  it('is not fooled by the key inside a string, and answers undefined without one', () => {
    const body = JSON.stringify({ bodyMarkdown: '"createdAt":"2020-01-01T00:00:00.000Z"' });
    expect(commitTimeOf(body)).to.equal(undefined);
    expect(commitTimeOf('{"createdAt":"not a date at all, really"}')).to.equal(undefined);
  });
});
