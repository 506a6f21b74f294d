import type { LuaCommand } from '../redis/lua-command.ts';

/**
 * Scores are expiry times in milliseconds of the Redis server's clock (TIME inside the script), so
 * gateways with skewed clocks still agree on which slots have expired. Redis 7 replicates script
 * effects, which makes TIME safe here.
 */
const NOW_MS = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * Takes a slot in one cap's set. KEYS[1] = the set; ARGV = lease id, cap, leaseMs, key TTL ms, then
 * the holders known dead. A lease id is `<holder>.<n>`: the slots of a holder known dead are dropped
 * with the expired ones, then the lease is added if there is room and the key's TTL pushed out, so
 * an abandoned set disappears by itself. Returns {1, 0} on success, or {0, ms until the earliest
 * remaining slot expires, the distinct holders of the remaining slots...}, for the caller to ask
 * which of them are still alive (their liveness keys live in other Cluster slots, which a script on
 * this set may not touch).
 */
export const TAKE_SLOT: LuaCommand = {
  name: 'chatCoordinationTakeStreamSlotOfLiveHolders',
  numberOfKeys: 1,
  lua: `${NOW_MS}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if #ARGV > 4 then
  local dead = {}
  for i = 5, #ARGV do dead[ARGV[i]] = true end
  for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    local holder = string.match(member, '^([^.]+)%.')
    if holder and dead[holder] then redis.call('ZREM', KEYS[1], member) end
  end
end
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  return {1, 0}
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local reply = {0, tonumber(first[2]) - now}
local seen = {}
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local holder = string.match(member, '^([^.]+)%.')
  if holder and not seen[holder] then
    seen[holder] = true
    reply[#reply + 1] = holder
  end
end
return reply
`,
};

/**
 * Renews a batch of slots in one set. KEYS[1] = the set; ARGV = leaseMs, key TTL ms, lease ids….
 * Only slots still present are renewed (ZADD XX): one that expired and was dropped by someone's
 * acquire may have been given away, so reviving it could break the cap. Returns the ids not found.
 */
export const RENEW_SLOTS: LuaCommand = {
  name: 'chatCoordinationRenewStreamSlots',
  numberOfKeys: 1,
  lua: `${NOW_MS}
local expiry = now + tonumber(ARGV[1])
local lost = {}
for i = 3, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    redis.call('ZADD', KEYS[1], 'XX', expiry, ARGV[i])
  else
    lost[#lost + 1] = ARGV[i]
  end
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return lost
`,
};

export function parseTake(reply: unknown): { taken: boolean; earliestExpiryMs: number; holders: string[] } {
  if (Array.isArray(reply) && reply.length >= 2) {
    const [taken, earliest] = reply.slice(0, 2).map(Number) as [number, number];
    if (Number.isFinite(taken) && Number.isFinite(earliest)) return { taken: taken === 1, earliestExpiryMs: earliest, holders: reply.slice(2).map(String) };
  }
  throw new Error(`unexpected stream slot reply: ${JSON.stringify(reply)}`);
}

export function parseLost(reply: unknown): string[] {
  if (Array.isArray(reply)) return reply.map(String);
  throw new Error(`unexpected stream slot renewal reply: ${JSON.stringify(reply)}`);
}
