/**
 * Bot runner for the chat service: consumes a bot's mention inboxes in order, hands each notification
 * with its message to a handler whose replies are idempotent per notification, and acknowledges the
 * checkpoint in batches, so a bot killed at any point and started again replies to every mention
 * exactly once.
 */
export { runBot } from './run-bot.ts';
export { replyIdempotencyKey } from './reply-key.ts';
export { MessageNotFoundError } from './message-locator.ts';
export type { BotContext, BotHandle, BotHandler, BotLogger, BotOptions } from './bot-options.ts';
export { ChatTokenRejectedError } from '@chat/client';
