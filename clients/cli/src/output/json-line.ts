// JSON.stringify escapes C0 controls but writes DEL, the C1 controls and the bidirectional and line
// separator marks as themselves; written as \u escapes they stay valid JSON and inert in a terminal.
const UNSAFE_IN_JSON = /[\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069]/g;

/** One API object as one line of JSON (`--json`), with nothing in it that a terminal would act on. */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(UNSAFE_IN_JSON, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`) + '\n';
}
