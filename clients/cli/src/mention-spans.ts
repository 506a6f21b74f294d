import { mentionBindingAt } from '@chat/client';
import { UsageError } from './usage-error.ts';

export interface MentionOption {
  principalKind: 'human' | 'bot';
  principalId: string;
}

interface MentionBindingInput extends MentionOption {
  startByte: number;
  endByte: number;
}

/** Parses one `--mention KIND:ID` value (`bot:b_ci`, `human:u_bob`). */
export function parseMentionOption(value: string): MentionOption {
  const match = /^(human|bot):(\S+)$/.exec(value);
  if (!match) throw new UsageError(`--mention takes KIND:ID with KIND human or bot (e.g. bot:b_ci), not ${JSON.stringify(value)}`);
  return { principalKind: match[1] as 'human' | 'bot', principalId: match[2]! };
}

/**
 * The structured mentions of a body: each `--mention KIND:ID` binds the next `@ID` of the body not
 * yet bound, as UTF-8 byte offsets (what the API counts in). A mention whose `@ID` is not in the
 * body is a usage error: the span must point at the text that shows it.
 */
export function bindMentions(body: string, mentions: MentionOption[]): MentionBindingInput[] {
  const taken: Array<[number, number]> = [];
  return mentions.map((mention) => {
    const needle = `@${mention.principalId}`;
    let from = 0;
    for (;;) {
      const index = body.indexOf(needle, from);
      if (index < 0) throw new UsageError(`the body has no free ${needle} for --mention ${mention.principalKind}:${mention.principalId}`);
      const { startByte, endByte } = mentionBindingAt(body, index, mention);
      from = index + needle.length;
      if (taken.some(([s, e]) => startByte < e && s < endByte)) continue;
      taken.push([startByte, endByte]);
      return { ...mention, startByte, endByte };
    }
  });
}
