/**
 * A test-only crash switch of the append path (CHAT_TEST_FAULT_EXIT_AFTER_COMMIT), so end-to-end
 * tests can kill the API exactly between commit and publish, or between publish and response, and
 * show that the outbox relay and idempotent retries cover both. Production leaves it off.
 */

/** Where the switch kills: right after the commit (before the publish), or after the publish (before the response). */
export type CrashPoint = 'commit' | 'publish';

/** The switch's setting: kill at `point` on the `nth` new message this process commits. */
export interface CrashSetting {
  point: CrashPoint;
  nth: number;
}

/** Hooks the append path calls for every new message it commits. */
export interface AppendFaults {
  /** Right after the commit, before the publish. */
  afterCommit(): void;
  /** After handing the message to the publisher, before the response; may wait for `published`. */
  afterPublish(published: Promise<void>): Promise<void>;
}

/** The production hooks: nothing happens. */
export const NO_APPEND_FAULTS: AppendFaults = {
  afterCommit: () => undefined,
  afterPublish: () => Promise.resolve(),
};

/** Hooks that call `crash` (an abrupt exit) on the `nth` new message, at the configured point. */
export function crashingAppendFaults(setting: CrashSetting, crash: () => void): AppendFaults {
  let committed = 0;
  return {
    afterCommit() {
      committed += 1;
      if (setting.point === 'commit' && committed === setting.nth) crash();
    },
    async afterPublish(published) {
      if (setting.point !== 'publish' || committed !== setting.nth) return;
      await published;
      crash();
    },
  };
}
