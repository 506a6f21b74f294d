import { ulid } from 'ulid';
import type { Fixture } from '../harness/fixture-factory.ts';

/** Repositories (each with one active branch), a bot that mentions and the bot under test. */
export interface BotWorld {
  repositories: Array<{ repositoryId: string; branchId: string }>;
  organizationId: string;
  /** The bot that posts the mentions (message:append and room:read on every repository). */
  writer: { id: string; credentialId: string };
  /** The bot under test: room:read and message:append on every repository, so it can be mentioned and reply. */
  bot: { id: string; credentialId: string };
}

/** A fresh world of `count` repositories with fresh IDs, and its dev-core fixture entries. */
export function buildBotWorld(count: number): { world: BotWorld; fixture: Fixture } {
  const s = ulid().slice(-10).toLowerCase();
  const world: BotWorld = {
    repositories: Array.from({ length: count }, () => ({ repositoryId: ulid(), branchId: ulid() })),
    organizationId: `o_botworld_${s}`,
    writer: { id: `b_mentioner_${s}`, credentialId: `c_mentioner_${s}` },
    bot: { id: `b_replier_${s}`, credentialId: `c_replier_${s}` },
  };
  const grants = (bot: string) =>
    world.repositories.map(({ repositoryId }, i) => ({
      id: `g_${bot}_${i}`,
      repositoryId,
      subject: { kind: 'organization' as const, id: world.organizationId },
      capabilities: ['room:read' as const, 'message:append' as const],
      state: 'active' as const,
    }));
  const fixture: Fixture = {
    users: [],
    organizations: [{ id: world.organizationId }],
    repositories: world.repositories.map(({ repositoryId, branchId }) => ({
      id: repositoryId,
      state: 'active',
      branches: [{ id: branchId, state: 'active' }],
      members: {},
    })),
    bots: [world.writer, world.bot].map((bot) => ({ id: bot.id, credentials: [{ id: bot.credentialId, state: 'active' as const }], grants: grants(bot.id) })),
  };
  return { world, fixture };
}

/** The append body of mention number `i` of the bot: `@<bot> task <i>`, with its structured mention. */
export function mentionBody(botId: string, i: number) {
  const mention = `@${botId}`;
  return { bodyMarkdown: `${mention} task ${i}`, mentions: [{ principalKind: 'bot' as const, principalId: botId, startByte: 0, endByte: Buffer.byteLength(mention) }] };
}
