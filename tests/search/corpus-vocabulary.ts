/**
 * The words, identifiers, paths, URLs and code the generated background of the search corpus is made
 * of (corpus-generator.ts): what a team's rooms about a chat service hold day to day. The planted
 * messages (planted-messages.txt) share much of it, so a query has background to be found among;
 * what makes a planted message the one a query looks for is listed in RESERVED_IN_BACKGROUND, which
 * the generator checks no background message holds.
 */

export const PEOPLE = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank'] as const;
export const ROOMS = ['repository', 'feature-auth', 'fix-deploy', 'perf-search', 'release-2-4', 'refactor-config'] as const;

export const VERBS = ['review', 'merge', 'revert', 'rebase', 'bump', 'pin', 'retry', 'split', 'cache', 'profile', 'document', 'rename', 'benchmark', 'refactor', 'delete', 'restart', 'upgrade', 'backport', 'test', 'measure', 'trace', 'batch', 'shard', 'simplify', 'inline', 'vendor', 'mock', 'lint'];
export const VERBS_PAST = ['reviewed', 'merged', 'reverted', 'rebased', 'bumped', 'pinned', 'split up', 'profiled', 'documented', 'renamed', 'benchmarked', 'refactored', 'restarted', 'upgraded', 'backported', 'tested', 'measured', 'traced', 'simplified', 'deleted', 'rewrote', 'fixed', 'patched', 'rolled out'];
export const THINGS = [
  'migration', 'pipeline', 'cache layer', 'rate limiter', 'login page', 'release notes', 'worker pool', 'staging cluster', 'retry loop',
  'connection pool', 'schema change', 'feature flag', 'build matrix', 'search index', 'notifier', 'gateway', 'outbox relay', 'inbox stream',
  'SDK', 'CLI', 'viewer', 'dashboard', 'alerting rule', 'load test', 'lockfile', 'docker image', 'helm chart', 'base image', 'node upgrade',
  'cursor codec', 'markdown renderer', 'room list', 'webhook sender', 'session store', 'metrics endpoint', 'health check', 'readiness probe',
  'backup job', 'vacuum job', 'bot runner', 'mention picker', 'permalink', 'history read', 'stream lease', 'ingress', 'TLS setup',
  'audit log', 'changelog', 'benchmark', 'e2e suite', 'unit tests', 'typecheck', 'lint config', 'sign-in flow', 'OAuth handoff',
];
export const PROBLEMS = [
  'times out', 'fails', 'is slow', 'breaks', 'hangs', 'leaks memory', 'returns 500', 'returns the wrong page', 'double-counts', 'drops events',
  'is broken', 'spams the logs', 'never finishes', 'crashes on start', 'is red', 'flakes', 'retries forever', 'uses too much CPU', 'loses the cursor',
  'ignores the limit', 'blocks the event loop', 'skips a message', 'sends it twice',
];
export const PROBLEM_NOUNS = ['timeouts', 'a memory leak', '500s', 'duplicate events', 'slow queries', 'lock contention', 'CPU spikes', 'dropped connections', 'stale reads', 'GC pauses', 'a thundering herd', 'retry storms', 'high p99'];
export const WHEN = ['since yesterday', 'on main', 'after the upgrade', 'under load', 'on Mondays', 'in CI', 'every few hours', 'this morning', 'since the last release', 'after a restart', 'at night', 'during the backfill', 'right after deploys'];
export const WHERE = ['on staging', 'in prod', 'in CI', 'on my machine', 'on the macOS runners', 'in the embedded mode', 'behind the proxy', 'in the canary', 'on the replica'];
export const EVENTS = ['the release', 'Friday', 'standup', 'the demo', 'the retro', 'the planning meeting', 'the holidays', 'the offsite', 'lunch', 'the board meeting'];
export const ADJECTIVES = ['green', 'red', 'slow', 'fast', 'noisy', 'quiet', 'stable', 'fine', 'weird', 'stuck', 'done', 'ready', 'blocked', 'merged'];

export const CAMEL_IDENTIFIERS = [
  'renderMarkdown', 'SessionManager', 'appendMessages', 'RoomCursorCodec', 'listInboxItems', 'StreamGateway', 'OutboxRelay', 'RedisBackbone',
  'AuthFilter', 'HealthCheckServlet', 'WorkerPool', 'createStore', 'openDatabase', 'decodeCursor', 'placeBudget', 'highlightFragments',
  'MentionParser', 'UserDirectory', 'FeatureFlagClient', 'BuildMatrix', 'parseSearchQuery', 'toMessageResponse', 'acquireLease', 'renewLeases',
  'InboxConsumer', 'BotRunner', 'ChatClient', 'retryWithJitter', 'readHistory', 'fetchRoom', 'DevCoreClient', 'CursorCodec', 'MessageRepository',
  'onStreamOpen', 'handleAppend', 'signToken', 'verifyWebhook', 'PermalinkView', 'RoomListItem', 'useInbox', 'useRoomHistory',
];
export const SNAKE_IDENTIFIERS = [
  'retry_budget', 'room_id', 'last_seq', 'created_at', 'body_markdown', 'sender_id', 'idempotency_key', 'batch_id', 'request_id', 'pool_size',
  'statement_timeout', 'user_agent', 'api_key', 'page_size', 'scope_key', 'access_token', 'refresh_token', 'cache_hit_ratio', 'job_queue',
  'webhook_url', 'rendered_html', 'last_message_at', 'feed_seq', 'inbox_key', 'principal_id', 'branch_id', 'max_connections', 'work_mem',
  'shared_buffers', 'search_text', 'node_env', 'log_level', 'read_timeout', 'write_timeout',
];
export const CONSTANTS = ['DATABASE_URL', 'REDIS_URL', 'APPEND_RATE_LIMIT', 'LOG_LEVEL', 'GATEWAY_HEARTBEAT_MS', 'CORE_URL', 'DATA_DIR', 'PORT', 'NODE_OPTIONS', 'STREAM_CAP_PER_ROOM'];
export const DOTTED_NAMES = [
  'server.port', 'cache.ttl_seconds', 'db.pool.max_size', 'log.level', 'http.timeout_ms', 'queue.visibility_timeout', 'gateway.heartbeat_ms',
  'search.timeout_ms', 'feature_flags.new_editor', 'config.log_format', 'config.pool_size', 'config.retry_jitter', 'metrics.push_interval',
  'tls.min_version', 'auth.session_ttl', 'redis.key_prefix', 'viewer.public_url', 'notifier.sweep_interval_ms',
];
export const CONFIG_VALUES = ['5', '10', '30', '64', '250', '1000', '30000', 'true', 'false', '"debug"', '"info"', '0.5', '512MB'];
export const ENVIRONMENTS = ['staging', 'prod', 'the canary', 'dev', 'the e2e stack', 'the load-test cluster'];
export const PATHS = [
  'src/store/messages.ts', 'services/api/src/routes/search.routes.ts', 'libraries/backbone/src/redis-backbone.ts', 'src/auth/session.ts',
  'src/config/index.ts', 'app/models/user.py', 'app/handlers/push.py', 'cmd/worker/main.go', 'pkg/queue/consumer.go',
  'web/src/components/RoomList.tsx', 'infra/k8s/gateway.yaml', '.github/workflows/ci.yml', 'Dockerfile', 'docs/operations.md',
  'scripts/seed.sh', 'src/main/java/com/acme/auth/SessionManager.java', 'libraries/store/src/message-sql.ts', 'services/notifier/src/sweeper.ts',
  'clients/cli/src/commands/tail.ts', 'tests/rest/search.test.ts', 'package.json', 'pnpm-lock.yaml', 'README.md', 'src/http/routes.ts',
  'app/jobs/digest.py', 'src/main/java/com/acme/http/AuthFilter.java', 'web/src/hooks/useInbox.ts', 'src/db/pool.ts', 'src/util/retry.ts',
];
export const PACKAGES = ['undici', 'pg', 'ioredis', 'zod', 'pino', 'express', 'vitest', 'mocha', 'playwright', 'drizzle-orm', 'markdown-it', 'dompurify'];
export const BRANCH_NAMES = ['main', 'release-2.3', 'feature/search-ui', 'fix/cursor-overflow', 'chore/deps', 'perf/batching', 'hotfix/csp'];
export const URL_SHAPES = [
  (n: number) => `https://github.com/acme/chat/pull/${n}`,
  (n: number) => `https://github.com/acme/chat/issues/${n}`,
  (n: number) => `https://ci.acme.dev/builds/${n}`,
  (n: number) => `https://docs.acme.dev/guides/${['streams', 'bots', 'inbox', 'history', 'tokens'][n % 5]}#section-${n % 7}`,
  (n: number) => `https://stackoverflow.com/questions/${n * 37}`,
  (n: number) => `https://status.acme.dev/incidents/${n}`,
  (n: number) => `https://www.npmjs.com/package/${PACKAGES[n % PACKAGES.length]}`,
];

export const JAVA_CLASSES = ['SessionManager', 'WorkerPool', 'UserDirectory', 'HealthCheckServlet', 'FeatureFlagClient', 'AuthFilter', 'BuildMatrix'];
export const JAVA_EXCEPTIONS = ['java.lang.NullPointerException', 'java.lang.IllegalStateException: pool closed', 'java.lang.IllegalArgumentException: limit must be positive', 'java.util.concurrent.TimeoutException'];
export const PYTHON_FILES = ['app/models/user.py', 'app/handlers/push.py', 'app/jobs/digest.py', 'app/api/rooms.py'];
export const PYTHON_ERRORS = ["KeyError: 'room_id'", 'ValueError: invalid literal for int() with base 10', 'TimeoutError: timed out', 'psycopg2.OperationalError: server closed the connection unexpectedly'];
export const NODE_ERRORS = [
  "TypeError: Cannot read properties of undefined (reading 'length')",
  "TypeError: Cannot read properties of null (reading 'id')",
  'Error: connect ECONNREFUSED 10.0.3.12:5432',
  'Error: read ETIMEDOUT',
  'RangeError: Invalid time value',
];

export const ACKS = ['LGTM', 'thanks!', 'on it', '+1', 'nice catch', 'will do after lunch', 'merged', 'ship it', 'agreed', 'done', 'looking', 'good point, fixing', 'ack', ':tada:'];

/**
 * What a team keeps talking about: the classes and functions of a few planted bugs, which the
 * background's chatter names (with its exception now and then) without holding the trace, the code
 * or the report itself. `names` are the reserved strings (lowercased) chatter about the topic may hold.
 */
export const CHATTER_TOPICS = [
  { entity: 'TokenRefresher', exception: 'NullPointerException', names: ['tokenrefresher'] },
  { entity: 'SegmentMerger', exception: 'OutOfMemoryError', names: ['segmentmerger', 'segment', 'outofmemory'] },
  { entity: 'WebhookDispatcher', exception: 'ClassCastException', names: ['webhookdispatcher', 'classcast'] },
  { entity: 'decodeRoomCursor', exception: 'TypeError', names: ['decoderoomcursor'] },
  { entity: 'parse_config', exception: 'ConstructorError', names: ['parse_config', 'constructor'] },
  { entity: 'run_batch', exception: 'QueryCanceled', names: ['run_batch', 'querycanceled'] },
] as const;

/**
 * What only planted messages hold (lowercased, as search matches): identifiers, paths, hosts,
 * phrases and words the labelled queries find them by. A background message holding one would be a
 * match the labels know nothing of, so the generator refuses such a background.
 */
export const RESERVED_IN_BACKGROUND = [
  'tokenrefresher', 'parse_config', 'parseconfig', 'load_settings', 'max_retries', 'retry_backoff', 'deploym', 'auth/token', 'grafana', 'sentry',
  'postgresql.org', 'node-postgres', 'pgtrgm', 'ratelimiter', 'pendingwrites', 'roomsubscription', 'backoffpolicy', 'retryqueue', 'queueconsumer',
  'inflight', 'lock_wait', 'fanout_batch', 'batch_size', 'sender_user', 'next_attempt', '6379', 'decoderoomcursor', 'list-messages', 'out of memory',
  'outofmemory', 'segmentmerger', 'classcast', 'webhookdispatcher', 'querycanceled', 'reindex', 'statement timeout', 'gin_trgm', 'gin_pending',
  'concurrently', 'backoffdelay', 'kubectl', 'transienterror', 'withtimeout', 'code freeze', 'on call', 'flaky again', 'slower', 'review queue',
  'pager', 'arm64', 'locks the', 'xmlhttprequest', 'getelementbyid', 'lease_renew', 'unhandledpromise', 'aborterror', 'leaserenewal', 'evictidle',
  'modulenotfound', 'acme_sdk', 'chars()', 'bitmap heap', 'tini', 'postmortem', 'latency budget', 'onboarding', 'nxdomain', 'sunset', 'egress',
  'ipv6', 'europe/berlin', 'licence', 'screen reader', 'standup notes', 'changelog for', 'hotfix/login', 'trigram index', 'webhook secret',
  'content-security', 'xread', 'pgbouncer', 'autovacuum', 'straße', '🚀', 'smoke-test', 'retry a 4xx', 'canary to zero', 'design note', 'incident timeline',
  'all checks passed', 'quarantined', '2.4.0 is out', 'dev-token', 'chat login', 'wiki.acme', 'runbooks.acme', 'amazonaws', 'null check', 'expired-token',
  'anchors', 'yaml.safe_load', 'safeloader', 'constructor', 'readiness probe keeps', 'rolled back the', 'expiry math', 'expiresat', 'clock skew',
  'chat_max_retries', 'max_retry_delay', 'websocket', 'highlight fragments', 'tls certificate', 'permission check', 'cross-zone', 'digest in utc', 'apache-2.0',
  'live region', 'vendor call', 'search extension entry', 'needs approval', 'emoji picker', 'advisory lock', 'freeze passes', 'folding', 'url builder',
  'similarity threshold', 'handle_push', 'users_by_id', 'redis-backbone.js', 'startgateway', 'tcpconnectwrap', 'processticksandrejections',
  'segment', 'indexwriter', 'run_batch', 'psycopg2.errors', 'eclipse.jetty', 'filterholder', 'string.length()', 'refreshtoken" is null',
];

/** Short code blocks of the background, `{ident}`/`{snake}`/`{path}` filled in by the generator. */
export const CODE_SNIPPETS = [
  { lang: 'ts', text: 'const page = await {camel}(roomId, { limit: 50 });\nif (page.items.length === 0) return null;' },
  { lang: 'ts', text: 'export async function {camel}(input: Input): Promise<void> {\n  await store.transaction(async (tx) => tx.insert(input));\n}' },
  { lang: 'py', text: 'def {snake}(rows):\n    return [r for r in rows if r.{snake2} is not None]' },
  { lang: 'sql', text: 'SELECT {snake}, count(*) FROM messages GROUP BY 1 ORDER BY 2 DESC LIMIT 20;' },
  { lang: 'sql', text: 'UPDATE rooms SET {snake} = now() WHERE room_id = $1;' },
  { lang: 'sh', text: 'pnpm --filter @chat/api test -- --grep "{camel}"' },
  { lang: 'sh', text: 'git log --oneline -- {path} | head -20' },
  { lang: 'yaml', text: 'env:\n  - name: {constant}\n    value: "{value}"' },
  { lang: 'json', text: '{ "{snake}": {value}, "enabled": true }' },
  { lang: 'go', text: 'if err := {camel}(ctx); err != nil {\n\treturn fmt.Errorf("{snake}: %w", err)\n}' },
];
