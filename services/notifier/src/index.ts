export { createNotifierRuntime, NOTIFIER_DEFAULTS, type NotifierRuntime, type NotifierRuntimeOptions, type NotifierResources, type NotifierSettings, type NotifierSettingsInput } from './runtime.ts';
export { NotifierEnvSchema, loadNotifierConfig, type NotifierConfig } from './config.ts';
export { fanoutMessage, type FanoutDeps, type FanoutResult } from './domain/fanout-message.ts';
export { groupMentionTargets, type MentionTarget } from './domain/mention-targets.ts';
export { PoisonFanoutError } from './domain/poison-fanout-error.ts';
export { FanoutProcessor, type FanoutOutcome, type FanoutProcessorSettings } from './workers/fanout-processor.ts';
export { FanoutSweeper, type FanoutSweeperSettings } from './workers/fanout-sweeper.worker.ts';
export { createNotifierMetrics, type NotifierMetrics, type NotifierMetricSources } from './metrics.ts';
