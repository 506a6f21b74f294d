import type { MessageRow, NotificationRow } from '@chat/store';
import { expect } from 'chai';
import { messageJson, toMessageResponse } from './message.wire.ts';
import { storedMessageEvents } from './message-events.ts';
import { feedCursorBinding, inboxCursorBinding, parseFeedEntry, parseStoredNotification, storedNotificationJson, toNotificationResponse, withInboxPosition } from './notification.wire.ts';

const row: MessageRow = {
  roomId: 'R1',
  seq: 7,
  messageId: 'M1',
  repositoryId: 'P1',
  branchId: null,
  senderKind: 'user',
  senderId: 'u_alice',
  requestId: 'req-1',
  idempotencyKey: 'K1',
  bodyMarkdown: 'hi @bob',
  bodyBytes: 7,
  renderedHtml: '<p>hi @bob</p>',
  mentions: [{ principalKind: 'human', principalId: 'u_bob', startByte: 3, endByte: 7 }],
  authorizationDecisionId: 'd1',
  authorizingSubjectId: 'u_alice',
  authorizingSubjectKind: 'user',
  botCredentialId: null,
  botGrantId: null,
  createdAt: new Date('2026-01-02T03:04:05.678Z'),
} as MessageRow;

const notification = {
  inboxKey: 'I1',
  seq: 3,
  notificationId: 'N1',
  targetKind: 'human',
  targetId: 'u_bob',
  repositoryId: 'P1',
  roomId: 'R1',
  messageId: 'M1',
  senderKind: 'user',
  senderId: 'u_alice',
  spans: [{ startByte: 3, endByte: 7 }],
  createdAt: new Date('2026-01-02T03:04:05.678Z'),
  branchId: null,
} as unknown as NotificationRow;

describe('the wire format', () => {
  it('serializes a message byte for byte as every path shows it (key order included)', () => {
    expect(messageJson(row)).to.equal(
      '{"messageId":"M1","roomId":"R1","repositoryId":"P1","senderKind":"user","senderId":"u_alice","requestId":"req-1",' +
        '"bodyMarkdown":"hi @bob","bodyBytes":7,"createdAt":"2026-01-02T03:04:05.678Z","idempotencyKey":"K1",' +
        '"renderPolicy":"sanitized_markdown_html_v1","renderedHtml":"<p>hi @bob</p>","branchId":null,"authorizationDecisionId":"d1",' +
        '"authorizingSubjectId":"u_alice","authorizingSubjectKind":"user","botCredentialId":null,"botGrantId":null,' +
        '"mentions":[{"principalKind":"human","principalId":"u_bob","startByte":3,"endByte":7}]}',
    );
    expect(toMessageResponse({ ...row, mentions: [] })).not.to.have.property('mentions');
    expect(toMessageResponse({ ...row, mentions: null })).not.to.have.property('mentions');
  });

  it("makes a stored message's events from the row: the same data the publisher sends", () => {
    expect(storedMessageEvents(row)).to.deep.equal([
      { channel: 'messages', scopeKey: 'R1', seq: 7, data: messageJson(row) },
      { channel: 'mentions', scopeKey: 'R1', seq: 7, data: '{"messageId":"M1"}' },
    ]);
    expect(storedMessageEvents({ ...row, mentions: null }).map((e) => e.channel)).to.deep.equal(['messages']);
  });

  it('serializes a notification as stored, and as a reader sees it from the row or from the live event alike', () => {
    const stored = storedNotificationJson(notification);
    expect(stored).to.equal(
      '{"notificationId":"N1","targetKind":"human","targetId":"u_bob","repositoryId":"P1","roomId":"R1","messageId":"M1",' +
        '"senderKind":"user","senderId":"u_alice","spans":[{"startByte":3,"endByte":7}],"createdAt":"2026-01-02T03:04:05.678Z","branchId":null}',
    );
    const fromRow = JSON.stringify(toNotificationResponse(notification, 3, 'C3'));
    const fromLive = JSON.stringify(withInboxPosition(parseStoredNotification(stored, 'event'), 'C3', true));
    expect(fromLive).to.equal(fromRow);
    expect(fromRow.endsWith(',"cursor":"C3","acknowledged":true}')).to.equal(true);
    expect(toNotificationResponse(notification, 2, 'C3').acknowledged).to.equal(false);
    expect(() => parseStoredNotification('{"x":1}', 'event 4')).to.throw(/event 4 is not a stored Notification/);
  });

  it("reads a feed's event, the stored notification with its inbox seq, into what the inbox's own event gives", () => {
    // The data the store writes beside the inbox entry: {"inboxSeq":<seq>,"notification":<the inbox entry's data>}.
    const data = `{"inboxSeq":${notification.seq},"notification":${storedNotificationJson(notification)}}`;
    const entry = parseFeedEntry(data, 'feed event 9');
    expect(entry.inboxSeq).to.equal(3);
    expect(JSON.stringify(withInboxPosition(entry.notification, 'C3', false))).to.equal(JSON.stringify(toNotificationResponse(notification, 2, 'C3')));
    for (const bad of ['{"x":1}', '{"inboxSeq":"3","notification":{"notificationId":"N1"}}', '{"inboxSeq":3,"notification":null}', 'null']) {
      expect(() => parseFeedEntry(bad, 'feed event 9'), bad).to.throw(/feed event 9 is not a feed entry/);
    }
  });

  it('binds inbox cursors to one principal in one repository', () => {
    expect(inboxCursorBinding({ repositoryId: 'P1', principalKind: 'bot', principalId: 'b_ci' })).to.deep.equal({
      kind: 'inbox',
      repositoryId: 'P1',
      principalKind: 'bot',
      principalId: 'b_ci',
    });
  });

  it('binds feed cursors to one principal, whatever else the argument holds', () => {
    const inboxOwner = { repositoryId: 'P1', principalKind: 'bot', principalId: 'b_ci' } as const;
    expect(feedCursorBinding(inboxOwner)).to.deep.equal({
      kind: 'feed',
      principalKind: 'bot',
      principalId: 'b_ci',
    });
  });
});
