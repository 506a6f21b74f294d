/**
 * The search relevance corpus: a repository's rooms as a team fills them (prose, inline code and
 * fenced blocks, file paths, URLs, commit IDs, Node, Python and Java stack traces, identifiers in
 * every case style, dotted config names, mentions), generated from a seed, with the planted messages
 * of planted-messages.txt mixed in. The same seed gives the same corpus, so the labels of
 * relevance-queries.json (which planted messages each query looks for) hold for every run.
 */
import { readFileSync } from 'node:fs';
import { seededRandom } from '../harness/seeded-random.ts';
import { zipfPicker } from '../harness/zipf.ts';
import * as V from './corpus-vocabulary.ts';

export type RoomName = (typeof V.ROOMS)[number];
export type SenderName = (typeof V.PEOPLE)[number] | 'ci';

export interface CorpusMessage {
  /** A planted message's key, or `bg-<n>` for the background. */
  key: string;
  room: RoomName;
  sender: SenderName;
  /** Appended in epoch order, so `before:`/`after:` can name the instants between epochs. */
  epoch: number;
  /** Markdown, with `@{name}` where a sender is mentioned (the loader writes the principal ID there). */
  body: string;
  /** Who `@{name}` mentions, in body order. */
  mentions: SenderName[];
  planted: boolean;
  /** Also appended to a second repository, whose messages no search of the first may return. */
  copyToOther: boolean;
}

export const RELEVANCE_SEED = 20_261_201;
export const EPOCHS = 4;
export const SENDERS: readonly SenderName[] = [...V.PEOPLE, 'ci'];

const MENTION = /@\{([a-z]+)\}/g;

/** The planted messages of planted-messages.txt, in file order. */
export function plantedMessages(path = new URL('./planted-messages.txt', import.meta.url)): CorpusMessage[] {
  const text = readFileSync(path, 'utf8');
  const messages: CorpusMessage[] = [];
  const parts = text.split(/^@@ /m).slice(1);
  for (const part of parts) {
    const newline = part.indexOf('\n');
    const header = part.slice(0, newline).trim().split(/\s+/);
    const key = header[0]!;
    const fields = Object.fromEntries(header.slice(1).map((f) => f.split('=') as [string, string]));
    const body = part.slice(newline + 1).replace(/^\s*\n/, '').replace(/\s+$/, '');
    const room = fields.room as RoomName;
    const sender = fields.from as SenderName;
    const epoch = Number(fields.epoch);
    if (!(V.ROOMS as readonly string[]).includes(room) || !SENDERS.includes(sender) || !(epoch >= 0 && epoch < EPOCHS) || body.length === 0) {
      throw new Error(`planted message ${key}: bad header or empty body`);
    }
    messages.push({ key, room, sender, epoch, body, mentions: mentionsOf(body), planted: true, copyToOther: fields.copy === 'other' });
  }
  const keys = new Set(messages.map((m) => m.key));
  if (keys.size !== messages.length) throw new Error('planted messages: a key is used twice');
  return messages;
}

function mentionsOf(body: string): SenderName[] {
  return [...body.matchAll(MENTION)].map((m) => {
    if (!SENDERS.includes(m[1] as SenderName)) throw new Error(`@{${m[1]}} mentions no sender`);
    return m[1] as SenderName;
  });
}

/**
 * The whole corpus: `background` generated messages and the planted ones, epoch by epoch, each
 * epoch's planted messages placed among its background at random (seeded).
 */
export function generateCorpus(options: { seed?: number; background?: number } = {}): CorpusMessage[] {
  const random = seededRandom(options.seed ?? RELEVANCE_SEED);
  const count = options.background ?? 3000;
  const writer = backgroundWriter(random);
  const planted = plantedMessages();
  const corpus: CorpusMessage[] = [];
  for (let epoch = 0; epoch < EPOCHS; epoch++) {
    const from = Math.floor((epoch * count) / EPOCHS);
    const to = Math.floor(((epoch + 1) * count) / EPOCHS);
    const batch: CorpusMessage[] = [];
    for (let i = from; i < to; i++) batch.push({ key: `bg-${String(i).padStart(5, '0')}`, epoch, planted: false, copyToOther: false, ...writer.next() });
    for (const message of planted.filter((m) => m.epoch === epoch)) batch.splice(Math.floor(random() * (batch.length + 1)), 0, message);
    corpus.push(...batch);
  }
  return corpus;
}

export interface BackgroundWriter {
  /** The next background message: its room, sender, Markdown body and mentions. */
  next(): Pick<CorpusMessage, 'room' | 'sender' | 'body' | 'mentions'>;
}

/**
 * Background messages drawn from `random`: senders and rooms Zipf-like, the body one of the shapes a
 * team writes (prose most of the time, then code, paths, links, commits, traces, acknowledgements).
 * A draw that holds a reserved string (corpus-vocabulary.ts) is drawn again.
 */
export function backgroundWriter(random: () => number): BackgroundWriter {
  const senderIndex = zipfPicker(SENDERS.length, random);
  const roomIndex = zipfPicker(V.ROOMS.length, random);
  const text = new BodyText(random);
  return {
    next() {
      const sender = SENDERS[senderIndex()]!;
      const room = V.ROOMS[roomIndex()]!;
      for (let attempt = 0; attempt < 50; attempt++) {
        const { body, allowed } = sender === 'ci' ? { body: text.ciMessage(), allowed: [] } : text.personMessage();
        const lower = body.toLowerCase();
        if (V.RESERVED_IN_BACKGROUND.some((r) => lower.includes(r) && !allowed.includes(r))) continue;
        return { room, sender, body, mentions: mentionsOf(body) };
      }
      throw new Error('background: 50 draws in a row held a reserved string; the vocabulary overlaps RESERVED_IN_BACKGROUND');
    },
  };
}

const NODE_SOURCES = V.PATHS.filter((p) => p.endsWith('.ts'));

/** Two sentences as one message: the first closed with a full stop unless it ends in punctuation. */
function joinSentences(a: string, b: string): string {
  return /[.?!:]$/.test(a) ? `${a} ${b}` : `${a}. ${b}`;
}

/** The shapes of background bodies. */
class BodyText {
  constructor(private readonly random: () => number) {}

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  private chance(p: number): boolean {
    return this.random() < p;
  }

  private number(from: number, to: number): number {
    return from + Math.floor(this.random() * (to - from));
  }

  private hex(length: number): string {
    let out = '';
    for (let i = 0; i < length; i++) out += '0123456789abcdef'[Math.floor(this.random() * 16)];
    return out;
  }

  private identifier(): string {
    return this.chance(0.55) ? this.pick(V.CAMEL_IDENTIFIERS) : this.pick(V.SNAKE_IDENTIFIERS);
  }

  private url(): string {
    return this.pick(V.URL_SHAPES)(this.number(100, 9999));
  }

  /** A person's message, and the reserved strings it may hold (its chatter topic's names). */
  personMessage(): { body: string; allowed: readonly string[] } {
    const shape = this.random();
    let body: string;
    let allowed: readonly string[] = [];
    if (shape < 0.06) {
      const topic = this.pick(V.CHATTER_TOPICS);
      body = this.chatter(topic);
      allowed = topic.names;
    } else if (shape < 0.14) body = this.pick(V.ACKS);
    else if (shape < 0.5) body = this.chance(0.35) ? joinSentences(this.sentence(), this.sentence()) : this.sentence();
    else if (shape < 0.6) body = this.codeSentence();
    else if (shape < 0.67) body = this.pathSentence();
    else if (shape < 0.74) body = this.chance(0.5) ? joinSentences(this.sentence(), `see ${this.url()}`) : `${this.pick(['see', 'context:', 'more here:', 'related:'])} ${this.url()}`;
    else if (shape < 0.82) body = this.commitSentence();
    else if (shape < 0.87) body = this.configSentence();
    else if (shape < 0.95) body = `${this.pick(['something like', 'this works for me:', 'try', 'current version:', 'repro:'])}\n${this.codeBlock()}`;
    else body = `${this.pick(['seeing this', 'got this', 'any idea?', 'from the logs:', ''])}\n${this.stackTrace()}`.trimStart();
    // Some messages address someone.
    if (this.chance(0.08)) body = `@{${this.pick(V.PEOPLE)}} ${body}`;
    return { body, allowed };
  }

  /** Talk about a known bug: its class or function, sometimes its exception, never its trace. */
  private chatter(topic: (typeof V.CHATTER_TOPICS)[number]): string {
    const { entity, exception } = topic;
    switch (this.number(0, 7)) {
      case 0:
        return `the ${exception} in ${entity} again ${this.pick(V.WHERE)}`;
      case 1:
        return `is anyone looking at the ${exception} in ${entity}?`;
      case 2:
        return `${entity} threw ${exception} ${this.pick(V.WHEN)}`;
      case 3:
        return `${entity} ${this.pick(V.PROBLEMS)} ${this.pick(V.WHEN)}`;
      case 4:
        return `I'll look at ${entity} after ${this.pick(V.EVENTS)}`;
      case 5:
        return `any update on ${entity}? the ${this.pick(V.THINGS)} depends on it`;
      default:
        return `who wrote \`${entity}\`? ${this.sentence()}`;
    }
  }

  ciMessage(): string {
    const build = this.number(3000, 9999);
    switch (this.number(0, 6)) {
      case 0:
        return `Build #${build} passed on ${this.pick(V.BRANCH_NAMES)} (${this.number(3, 19)} min)`;
      case 1:
        return `Build #${build} failed on ${this.pick(V.BRANCH_NAMES)}: ${this.number(1, 9)} tests failed in ${this.pick(V.PATHS)}\n${this.stackTrace()}`;
      case 2:
        return `Deployed ${this.hex(40)} to ${this.pick(V.ENVIRONMENTS)}`;
      case 3:
        return `Dependabot: bump ${this.pick(V.PACKAGES)} from ${this.number(1, 9)}.${this.number(0, 20)}.${this.number(0, 9)} to ${this.number(1, 9)}.${this.number(0, 20)}.${this.number(0, 9)} ${this.url()}`;
      case 4:
        return `Nightly ${this.pick(V.THINGS)} ${this.pick(['passed', 'failed', 'was skipped'])}: https://ci.acme.dev/builds/${build}`;
      default:
        return `Coverage on ${this.pick(V.BRANCH_NAMES)} is ${this.number(60, 95)}.${this.number(0, 9)}% (${this.chance(0.5) ? '+' : '-'}${this.number(0, 3)}.${this.number(0, 9)})`;
    }
  }

  private sentence(): string {
    const thing = this.pick(V.THINGS);
    switch (this.number(0, 12)) {
      case 0:
        return `I ${this.pick(V.VERBS_PAST)} the ${thing} ${this.pick(V.WHEN)}.`;
      case 1:
        return `can someone ${this.pick(V.VERBS)} the ${thing}? it ${this.pick(V.PROBLEMS)} ${this.pick(V.WHEN)}`;
      case 2:
        return `the ${thing} ${this.pick(V.PROBLEMS)} ${this.pick(V.WHERE)}`;
      case 3:
        return `PR #${this.number(100, 4999)} is ready for review: ${this.pick(V.VERBS)} the ${thing}`;
      case 4:
        return `the ${thing} looks ${this.pick(V.ADJECTIVES)} to me, left ${this.pick(['a nit', 'two nits', 'a question', 'some comments'])}`;
      case 5:
        return `I'm seeing ${this.pick(V.PROBLEM_NOUNS)} in the ${thing} ${this.pick(V.WHERE)}`;
      case 6:
        return `let's ${this.pick(V.VERBS)} the ${thing} after ${this.pick(V.EVENTS)}`;
      case 7:
        return `is the ${thing} ${this.pick(V.ADJECTIVES)} yet? I want to ${this.pick(V.VERBS)} the ${this.pick(V.THINGS)} before ${this.pick(V.EVENTS)}`;
      case 8:
        return `${this.pick(V.PROBLEM_NOUNS)} again ${this.pick(V.WHERE)}, probably the ${thing}`;
      case 9:
        return `we should ${this.pick(V.VERBS)} the ${thing} and ${this.pick(V.VERBS)} the ${this.pick(V.THINGS)}`;
      case 10:
        return `who owns the ${thing}? it ${this.pick(V.PROBLEMS)} ${this.pick(V.WHEN)}`;
      default:
        return `the ${thing} is ${this.pick(V.ADJECTIVES)} ${this.pick(V.WHERE)}, ${this.pick(V.ACKS).toLowerCase()}`;
    }
  }

  private codeSentence(): string {
    const a = this.identifier();
    switch (this.number(0, 5)) {
      case 0:
        return `\`${a}\` ${this.pick(V.PROBLEMS)} when the ${this.pick(V.THINGS)} is empty`;
      case 1:
        return `rename \`${a}\` to \`${this.identifier()}\`?`;
      case 2:
        return `${a} ${this.pick(V.PROBLEMS)} ${this.pick(V.WHEN)}`;
      case 3:
        return `\`${this.pick(V.CONSTANTS)}\` is not passed to the ${this.pick(V.THINGS)} ${this.pick(V.WHERE)}`;
      default:
        return `we call \`${a}()\` twice in the ${this.pick(V.THINGS)}, once is enough`;
    }
  }

  private pathSentence(): string {
    const path = this.pick(V.PATHS);
    switch (this.number(0, 4)) {
      case 0:
        return `the change in ${path} ${this.pick(['touches', 'renames', 'removes', 'inlines'])} \`${this.identifier()}\``;
      case 1:
        return `${path}:${this.number(10, 400)} ${this.pick(V.PROBLEMS)} ${this.pick(V.WHEN)}`;
      case 2:
        return joinSentences(`can you look at ${path}?`, this.sentence());
      default:
        return `moved ${this.identifier()} from ${path} to ${this.pick(V.PATHS)}`;
    }
  }

  private commitSentence(): string {
    const full = this.hex(40);
    switch (this.number(0, 4)) {
      case 0:
        return `pushed ${full} to ${this.pick(V.BRANCH_NAMES)}`;
      case 1:
        return `reverted ${full.slice(0, this.number(7, 12))}, it ${this.pick(V.PROBLEMS)}`;
      case 2:
        return `${full.slice(0, 7)} ${this.pick(V.VERBS_PAST)} the ${this.pick(V.THINGS)}`;
      default:
        return `the ${this.pick(V.THINGS)} ${this.pick(V.PROBLEMS)} since ${full}`;
    }
  }

  private configSentence(): string {
    const name = this.pick(V.DOTTED_NAMES);
    switch (this.number(0, 3)) {
      case 0:
        return `\`${name}\` is set to ${this.pick(V.CONFIG_VALUES)} in ${this.pick(V.ENVIRONMENTS)}`;
      case 1:
        return `${name} = ${this.pick(V.CONFIG_VALUES)} fixed the ${this.pick(V.PROBLEM_NOUNS)}`;
      default:
        return `does anyone know why ${name} differs between ${this.pick(V.ENVIRONMENTS)} and ${this.pick(V.ENVIRONMENTS)}?`;
    }
  }

  private codeBlock(): string {
    const snippet = this.pick(V.CODE_SNIPPETS);
    const text = snippet.text
      .replace('{camel}', this.pick(V.CAMEL_IDENTIFIERS))
      .replace('{snake}', this.pick(V.SNAKE_IDENTIFIERS))
      .replace('{snake2}', this.pick(V.SNAKE_IDENTIFIERS))
      .replace('{path}', this.pick(V.PATHS))
      .replace('{constant}', this.pick(V.CONSTANTS))
      .replace('{value}', this.pick(V.CONFIG_VALUES));
    return `\`\`\`${snippet.lang}\n${text}\n\`\`\``;
  }

  private stackTrace(): string {
    const kind = this.number(0, 3);
    if (kind === 0) {
      const frames = Array.from({ length: this.number(2, 5) }, () => {
        const fn = this.pick(V.CAMEL_IDENTIFIERS);
        return `    at ${fn} (/app/${this.pick(NODE_SOURCES).replace(/\.ts$/, '.js')}:${this.number(1, 400)}:${this.number(1, 40)})`;
      });
      return `\`\`\`\n${this.pick(V.NODE_ERRORS)}\n${frames.join('\n')}\n\`\`\``;
    }
    if (kind === 1) {
      const file = this.pick(V.PYTHON_FILES);
      return `\`\`\`\nTraceback (most recent call last):\n  File "/srv/${file}", line ${this.number(10, 300)}, in ${this.pick(V.SNAKE_IDENTIFIERS)}\n    result = handler(event)\n${this.pick(V.PYTHON_ERRORS)}\n\`\`\``;
    }
    const cls = this.pick(V.JAVA_CLASSES);
    const frames = Array.from({ length: this.number(2, 5) }, () => {
      const c = this.pick(V.JAVA_CLASSES);
      return `\tat com.acme.core.${c}.${this.pick(['run', 'handle', 'apply', 'get', 'close'])}(${c}.java:${this.number(10, 600)})`;
    });
    return `\`\`\`\n${this.pick(V.JAVA_EXCEPTIONS)}\n\tat com.acme.core.${cls}.call(${cls}.java:${this.number(10, 600)})\n${frames.join('\n')}\n\`\`\``;
  }
}
