import type { AcknowledgeInboxResponse, MessageResponse, NotificationResponse, RoomResponse, SearchResult } from '@chat/client';
import { firstLine } from '../message-first-lines.ts';
import { highlightLine } from './highlight-line.ts';
import type { Palette } from './palette.ts';
import { terminalSafe, terminalSafeLine } from './terminal-text.ts';

const line = terminalSafeLine;

/** `2026-11-25T13:20:01.123Z` as `2026-11-25 13:20:01` (UTC, like the API). */
function shortTime(iso: string): string {
  return line(iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z').replace(/Z$/, ''));
}

/** Room metadata as `key: value` lines. */
export function formatRoom(room: RoomResponse, p: Palette): string {
  const fields: Array<[string, unknown]> = [
    ['repository', room.repositoryId],
    ['branch', room.branchId],
    ['kind', room.kind],
    ['state', room.state],
    ['persisted', room.persisted],
    ['messages', room.messageCount],
    ['room', room.roomId],
    ['created', room.createdAt],
    ['last message', room.lastMessageAt],
    ['sealed', room.sealedAt],
    ['version', room.version],
  ];
  return fields
    .filter(([, value]) => value !== undefined && value !== null)
    .map(([key, value]) => `${p.dim(`${key}:`.padEnd(14))}${line(String(value))}\n`)
    .join('');
}

/**
 * One message: a header (time, sender, ID) and the body indented under it. The body is printed as
 * the text of `bodyMarkdown`: never the rendered HTML, never with links added (spec 1, rule 6), and
 * with anything that could steer the terminal made visible.
 */
export function formatMessage(message: MessageResponse, p: Palette): string {
  const sender = `${message.senderKind === 'bot' ? 'bot ' : ''}${line(message.senderId)}`;
  const header = `${p.dim(shortTime(message.createdAt))}  ${p.bold(sender)}  ${p.dim(line(message.messageId))}`;
  // A body's final line feed ends its last line rather than starting an empty one.
  const body = terminalSafe(message.bodyMarkdown.replace(/\n$/, ''))
    .split('\n')
    .map((text) => `  ${text}`)
    .join('\n');
  return `${header}\n${body}\n`;
}

/**
 * One notification: unacknowledged ones marked, the first line of its message when it is known
 * (`text`), and the cursor to acknowledge through.
 */
export function formatNotification(n: NotificationResponse, p: Palette, text?: string): string {
  const mark = n.acknowledged ? ' ' : p.accent('●');
  const where = n.branchId ? `branch ${line(n.branchId)}` : 'repository room';
  const sender = `${n.senderKind === 'bot' ? 'bot ' : ''}${line(n.senderId)}`;
  const header = `${mark} ${p.dim(shortTime(n.createdAt))}  ${p.bold(sender)} mentioned ${line(n.targetId)} in ${where}  message ${line(n.messageId)}\n`;
  const said = text === undefined ? '' : `    ${line(text)}\n`;
  return `${header}${said}    ${p.dim(`cursor ${line(n.cursor)}`)}\n`;
}

/** The outcome of an acknowledgement. */
export function formatAcknowledgement(result: AcknowledgeInboxResponse, p: Palette): string {
  const state = result.replayed ? p.dim(' (already acknowledged)') : '';
  return `acknowledged through ${line(result.acknowledgedCursor)}${state}\n`;
}

/**
 * One search result: a header (time, room, sender, message ID), each highlight fragment on a line of
 * its own with the matches marked (the body's first line when the query had filters only), and the
 * message's cursor in its room, which `chat messages --after` reads on from.
 */
export function formatSearchResult(result: SearchResult, p: Palette): string {
  const { message } = result;
  const where = result.branchId ? `branch ${line(result.branchId)}` : 'repository room';
  const sender = `${message.senderKind === 'bot' ? 'bot ' : ''}${line(message.senderId)}`;
  const header = `${p.dim(shortTime(message.createdAt))}  ${where}  ${p.bold(sender)}  ${p.dim(line(message.messageId))}\n`;
  const fragments = result.highlights.length > 0 ? result.highlights.map((runs) => highlightLine(runs, message.bodyMarkdown, p)) : [line(firstLine(message.bodyMarkdown))];
  return `${header}${fragments.map((fragment) => `    ${fragment}\n`).join('')}    ${p.dim(`cursor ${line(result.cursor)}`)}\n`;
}
