/**
 * Topic attributes (mirror Apache 5.x `TopicAttributes` + `AttributeParser` + `AttributeUtil`),
 * stored in `TopicConfig.attributes` (topics.json) without the +/- prefix:
 *
 *   message.type    NORMAL | FIFO | DELAY | TRANSACTION | MIXED | UNSPECIFIED, changeable
 *                   (which messages gRPC producers may send: topic-message-type.ts)
 *   queue.type      SimpleCQ | BatchCQ, fixed at creation (recorded; tsmq has one queue format)
 *   cleanup.policy  DELETE | COMPACTION, fixed at creation (recorded; no compaction in tsmq)
 *   reserve.time    integer ≥ -1, changeable (recorded)
 *
 * A request names changes as `+key=value` (add or update) and `-key` (delete), e.g. mqadmin
 * `updateTopic -a +message.type=FIFO` sends the header `attributes` = "+message.type=FIFO".
 * Creating a topic takes only `+` keys. Refusals throw TopicAttributeError with Apache's messages
 * ("unsupported key: k", "only add attribute is supported while creating topic. key: k",
 * "attempt to update an unchangeable attribute. key: k", "attempt to delete a nonexistent key: k",
 * "value is not in set: [...]", "alter duplication key. key: k", "kv string format wrong.").
 */

export class TopicAttributeError extends Error {}

interface AttributeSpec {
  changeable: boolean;
  /** Throws TopicAttributeError when `value` is not allowed. */
  verify(value: string): void;
}

function oneOf(values: readonly string[]): (value: string) => void {
  return (value) => {
    if (!values.includes(value)) throw new TopicAttributeError(`value is not in set: [${values.join(', ')}]`);
  };
}

export const TOPIC_MESSAGE_TYPES = ['UNSPECIFIED', 'NORMAL', 'FIFO', 'DELAY', 'TRANSACTION', 'MIXED'] as const;
export const MESSAGE_TYPE_ATTRIBUTE = 'message.type';

const ATTRIBUTES: Record<string, AttributeSpec> = {
  'queue.type': { changeable: false, verify: oneOf(['BatchCQ', 'SimpleCQ']) },
  'cleanup.policy': { changeable: false, verify: oneOf(['DELETE', 'COMPACTION']) },
  [MESSAGE_TYPE_ATTRIBUTE]: { changeable: true, verify: oneOf(TOPIC_MESSAGE_TYPES) },
  'reserve.time': {
    changeable: true,
    verify: (v) => {
      if (!/^-?\d+$/.test(v) || Number(v) < -1 || !Number.isSafeInteger(Number(v))) throw new TopicAttributeError(`value is not in range(-1, ${Number.MAX_SAFE_INTEGER})`);
    },
  },
};

/**
 * The header form "+a=1,+b=2,-c" as a map {"+a":"1","+b":"2","-c":""} (Apache AttributeParser
 * .parseToMap). Blank → {}. @throws TopicAttributeError for an entry without a value after "+".
 */
export function parseAttributeChanges(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (text === undefined || text.trim() === '') return out;
  for (const kv of text.split(',')) {
    if (kv.startsWith('-')) {
      out[kv] = '';
      continue;
    }
    const eq = kv.indexOf('=');
    if (eq <= 0 || eq === kv.length - 1 || kv.indexOf('=', eq + 1) >= 0) throw new TopicAttributeError('kv string format wrong.');
    out[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return out;
}

/**
 * Applies `changes` (keys with their +/- prefix) to `current` (keys without) and returns the new
 * attributes; `create` = the topic does not exist yet. @throws TopicAttributeError (see above).
 */
export function alterTopicAttributes(create: boolean, current: Readonly<Record<string, string>>, changes: Readonly<Record<string, string>>): Record<string, string> {
  const next: Record<string, string> = { ...current };
  const seen = new Set<string>();
  for (const [key, value] of Object.entries(changes)) {
    const op = key[0];
    const name = key.slice(1);
    if (name === '' || name.includes('+') || name.includes('-')) throw new TopicAttributeError('kv string format wrong.');
    if (seen.has(name)) throw new TopicAttributeError(`alter duplication key. key: ${name}`);
    seen.add(name);
    if (create && op !== '+') throw new TopicAttributeError(`only add attribute is supported while creating topic. key: ${name}`);
    if (op !== '+' && op !== '-') throw new TopicAttributeError(`wrong format key: ${name}`);
    const spec = ATTRIBUTES[name];
    if (!spec) throw new TopicAttributeError(`unsupported key: ${name}`);
    if (op === '-' && !(name in current)) throw new TopicAttributeError(`attempt to delete a nonexistent key: ${name}`);
    if (!create && !spec.changeable) throw new TopicAttributeError(`attempt to update an unchangeable attribute. key: ${name}`);
    if (op === '+') {
      spec.verify(value);
      next[name] = value;
    } else {
      delete next[name];
    }
  }
  return next;
}
