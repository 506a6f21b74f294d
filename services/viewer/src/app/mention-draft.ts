import { mentionBindingAt, type MentionBinding, type MentionPrincipal } from '@chat/client';

/**
 * The structured mentions of the message being written. Each is recorded when the person picks
 * someone in the `@` picker, at the string index of its `@`; byte spans are made only when the
 * message goes out, from the text as it is then.
 */

/** A mention recorded in the draft: who, and the string index of the `@` that shows it. */
export interface DraftMention extends MentionPrincipal {
  index: number;
}

/** Someone the picker offers: a person or bot who may read the room (core's member directory). */
export interface RoomReader {
  kind: 'human' | 'bot';
  id: string;
  role?: 'read' | 'write';
}

/**
 * A character that would run on from a mention's ID and make it read as another ID. A full stop is
 * not one: "thanks @u_bob." still shows u_bob.
 */
const ID_CHAR = /[A-Za-z0-9_-]/;
/** The characters of an ID being typed after `@`. */
const QUERY_TAIL = /[A-Za-z0-9_.-]*$/;
/** At most this many suggestions are shown at once; typing narrows the rest. */
export const MAX_SUGGESTIONS = 8;

/**
 * The `@` being typed at `caret`, if any: an `@` at the start or after a character that is not part
 * of a word (so `a@b` in an address does not open the picker), then ID characters up to the caret.
 */
export function activeMentionQuery(text: string, caret: number): { at: number; query: string } | undefined {
  const query = QUERY_TAIL.exec(text.slice(0, caret))?.[0] ?? '';
  const at = caret - query.length - 1;
  if (at < 0 || text[at] !== '@') return undefined;
  const before = text[at - 1];
  if (before !== undefined && /[\p{L}\p{N}_@]/u.test(before)) return undefined;
  return { at, query };
}

/** Whether `text` still shows `mention` exactly where it was recorded, and nothing runs on after its ID. */
function stillShown(text: string, mention: DraftMention): boolean {
  const shown = `@${mention.principalId}`;
  const after = text[mention.index + shown.length];
  return text.startsWith(shown, mention.index) && (after === undefined || !ID_CHAR.test(after));
}

/**
 * Carries recorded mentions across an edit from `before` to `after`. The edit is the span between
 * the longest common prefix and suffix; mentions wholly before it stay, those after it move by the
 * change in length, and one the edit touches is dropped, as is any that no longer reads `@<id>` at
 * its place. A dropped mention is better than a span that covers the wrong text.
 */
export function carryMentions(before: string, after: string, mentions: readonly DraftMention[]): DraftMention[] {
  if (mentions.length === 0) return [];
  let prefix = 0;
  const shorter = Math.min(before.length, after.length);
  while (prefix < shorter && before[prefix] === after[prefix]) prefix++;
  let suffix = 0;
  while (suffix < shorter - prefix && before[before.length - 1 - suffix] === after[after.length - 1 - suffix]) suffix++;
  const editEnd = before.length - suffix;
  const delta = after.length - before.length;
  const carried: DraftMention[] = [];
  for (const mention of mentions) {
    const end = mention.index + mention.principalId.length + 1;
    const moved = end <= prefix ? mention : mention.index >= editEnd ? { ...mention, index: mention.index + delta } : undefined;
    if (moved && stillShown(after, moved)) carried.push(moved);
  }
  return carried;
}

/**
 * Puts the picked reader in place of the `@query` that runs from `at` to `caret`, followed by a
 * space, and records the mention. Answers the new text, the caret just after the space, and the
 * mentions, the earlier ones carried across the change.
 */
export function insertMention(
  text: string,
  at: number,
  caret: number,
  reader: RoomReader,
  mentions: readonly DraftMention[],
): { text: string; caret: number; mentions: DraftMention[] } {
  const inserted = `@${reader.id} `;
  const next = text.slice(0, at) + inserted + text.slice(caret);
  const carried = carryMentions(text, next, mentions).filter((m) => m.index !== at);
  const mention: DraftMention = { principalKind: reader.kind, principalId: reader.id, index: at };
  return { text: next, caret: at + inserted.length, mentions: [...carried, mention].sort((a, b) => a.index - b.index) };
}

/** The readers whose ID holds `query` (case-insensitively), those starting with it first, at most {@link MAX_SUGGESTIONS}. */
export function suggestReaders(readers: readonly RoomReader[], query: string): RoomReader[] {
  const q = query.toLowerCase();
  const starts = readers.filter((r) => r.id.toLowerCase().startsWith(q));
  const holds = readers.filter((r) => !r.id.toLowerCase().startsWith(q) && r.id.toLowerCase().includes(q));
  return [...starts, ...holds].slice(0, MAX_SUGGESTIONS);
}

/** The mentions of the text that goes out, with exact UTF-8 byte spans, in body order. */
export function mentionBindings(text: string, mentions: readonly DraftMention[]): MentionBinding[] {
  return mentions.filter((m) => stillShown(text, m)).map((m) => mentionBindingAt(text, m.index, m));
}
