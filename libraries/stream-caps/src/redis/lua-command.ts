import type { RedisClient } from '@chat/redis-client';

/** A Lua script registered on a connection under a name (ioredis sends EVALSHA, falling back to EVAL). */
export interface LuaCommand {
  /** Unique per script; it becomes a method on the connection, so it carries our namespace. */
  readonly name: string;
  readonly numberOfKeys: number;
  readonly lua: string;
}

type ScriptCall = (...keysAndArgs: Array<string | number>) => unknown;

/** Registers the script once per connection; registering on a borrowed connection is harmless. */
export function defineLua(redis: RedisClient, command: LuaCommand): void {
  if (typeof (redis as unknown as Record<string, unknown>)[command.name] === 'function') return;
  redis.defineCommand(command.name, { numberOfKeys: command.numberOfKeys, lua: command.lua });
}

/** Runs a script defined with {@link defineLua}. */
export function runLua(
  redis: RedisClient,
  command: LuaCommand,
  keys: readonly string[],
  args: ReadonlyArray<string | number>,
): Promise<unknown> {
  return scriptOf(redis, command).call(redis, ...keys, ...args) as Promise<unknown>;
}

function scriptOf(host: RedisClient, command: LuaCommand): ScriptCall {
  const script = (host as unknown as Record<string, unknown>)[command.name];
  if (typeof script !== 'function') throw new Error(`Lua command ${command.name} is not defined on this connection`);
  return script as ScriptCall;
}
