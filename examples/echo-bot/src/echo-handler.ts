import type { BotContext } from '@chat/bot';

/** The API's largest body, in UTF-8 bytes. */
const MAX_BODY_BYTES = 16_384;

/**
 * The echo: the mentioning message's text without the mentions of this bot, quoted. It depends on
 * the message alone, so a run of the handler after a crash replies the same text (see `reply()`).
 */
export function echoText(context: Pick<BotContext, 'message' | 'notification'>): string {
  const bytes = Buffer.from(context.message.bodyMarkdown, 'utf8');
  const spans = [...context.notification.spans].sort((a, b) => b.startByte - a.startByte);
  let text = bytes;
  for (const span of spans) text = Buffer.concat([text.subarray(0, span.startByte), text.subarray(span.endByte)]);
  const said = text.toString('utf8').trim() || '(nothing but the mention)';
  const quoted = said
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');
  const reply = `echo for ${context.message.senderId}:\n\n${quoted}`;
  // Cut on a character boundary so the reply fits the body limit.
  let cut = Buffer.from(reply, 'utf8');
  if (cut.length <= MAX_BODY_BYTES) return reply;
  cut = cut.subarray(0, MAX_BODY_BYTES);
  return new TextDecoder('utf-8', { fatal: false }).decode(cut).replace(/\uFFFD+$/, '');
}

/** The echo bot's handler. */
export async function echoHandler(context: BotContext): Promise<void> {
  await context.reply(echoText(context));
}
