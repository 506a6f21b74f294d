import type { MentionBinding } from '@chat/client';

/** Mentions are not marked inside code or an existing link, where `@` text is not an address to someone. */
const EXCLUDED = 'code, pre, a, kbd, samp';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Marks the structured mentions of a rendered message: the `@<id>` texts of each mentioned principal
 * under `root`, in order and as many as the message mentions them, are wrapped in a `span.mention` (and `.mention-self` when it names `selfId`, with an
 * accessible "you"), built with DOM calls on text nodes only, so the server's sanitized HTML is never
 * re-parsed and no markup is injected. Answers how many were marked.
 */
export function highlightMentions(root: Element, mentions: readonly MentionBinding[] | undefined, selfId: string | undefined): number {
  const kinds = new Map<string, MentionBinding['principalKind']>();
  // As many marks per principal as the message has mentions of them: a second `@id` that is plain text stays plain.
  const left = new Map<string, number>();
  for (const m of mentions ?? []) {
    kinds.set(m.principalId, m.principalKind);
    left.set(m.principalId, (left.get(m.principalId) ?? 0) + 1);
  }
  if (kinds.size === 0) return 0;
  // Longest first, so `@u_bobby` is not taken for `@u_bob`; nothing may run on from the ID.
  const ids = [...kinds.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp);
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}_@])@(${ids.join('|')})(?![A-Za-z0-9_-])`, 'gu');
  const doc = root.ownerDocument;
  const nodes: Text[] = [];
  const walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const excluded = node.parentElement?.closest(EXCLUDED);
    if (!(excluded && root.contains(excluded))) nodes.push(node as Text);
  }
  let marked = 0;
  for (const node of nodes) {
    const parts: (string | Node)[] = [];
    let last = 0;
    for (const match of node.data.matchAll(pattern)) {
      const id = match[1]!;
      const remaining = left.get(id) ?? 0;
      if (remaining === 0) continue;
      left.set(id, remaining - 1);
      const span = doc.createElement('span');
      span.className = id === selfId ? 'mention mention-self' : 'mention';
      span.dataset['principalKind'] = kinds.get(id)!;
      span.dataset['principalId'] = id;
      span.textContent = match[0];
      if (id === selfId) span.title = 'Mentions you';
      parts.push(node.data.slice(last, match.index), span);
      last = match.index + match[0].length;
      marked++;
    }
    if (last === 0) continue;
    parts.push(node.data.slice(last));
    node.replaceWith(...parts);
  }
  return marked;
}
