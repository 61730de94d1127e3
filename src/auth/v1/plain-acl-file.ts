/**
 * One ACL 1.0 file (`plain_acl.yml`, RocketMQ 4.x / 5.0-5.3.2 `PlainAccessData`) read for the
 * migration to ACL 2.0. Shape (YAML):
 *
 *   globalWhiteRemoteAddresses: [10.10.103.*, 192.168.0.*]   # optional list of strings
 *   accounts:                                                 # optional list of accounts
 *     - accessKey: RocketMQ            # string (a number such as 12345678 is read as its text)
 *       secretKey: 12345678
 *       whiteRemoteAddress: 192.168.0.*
 *       admin: false                   # true/false (YAML 1.1 yes/no/on/off too)
 *       defaultTopicPerm: DENY         # PUB | SUB | PUB|SUB | SUB|PUB | DENY
 *       defaultGroupPerm: SUB
 *       topicPerms: [topicA=DENY, topicB=PUB|SUB]
 *       groupPerms: [groupA=DENY]
 *   dataVersion: [{counter: 1, timestamp: 1}]                 # written by 4.x tools; ignored
 *
 * Like Apache's SnakeYAML `loadAs(PlainAccessData.class)`: every scalar of a string field is taken
 * as its text (`secretKey: 0123` stays "0123"), `null`/`~`/empty mean absent, an empty file holds
 * nothing, and an unknown key or a value of the wrong kind is an error (Apache's broker then fails
 * to start with an AclException; tsmq throws PlainAclFileError naming the file and the key).
 */
import { parseDocument } from 'yaml';

/** One `accounts` item (Apache PlainAccessConfig); absent strings are null, absent lists empty. */
export interface PlainAccessAccount {
  accessKey: string | null;
  secretKey: string | null;
  whiteRemoteAddress: string | null;
  admin: boolean;
  defaultTopicPerm: string | null;
  defaultGroupPerm: string | null;
  /** `name=PERM` items, as written. */
  topicPerms: string[];
  groupPerms: string[];
}

/** The content of one plain_acl.yml. */
export interface PlainAclFileData {
  globalWhiteRemoteAddresses: string[];
  accounts: PlainAccessAccount[];
}

/** A plain_acl.yml that is not valid YAML or not of the shape above; the message names the file. */
export class PlainAclFileError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`ACL 1.0 file ${file}: ${reason}`);
    this.name = 'PlainAclFileError';
  }
}

const TOP_KEYS = new Set(['globalWhiteRemoteAddresses', 'accounts', 'dataVersion']);
const ACCOUNT_KEYS = new Set(['accessKey', 'secretKey', 'whiteRemoteAddress', 'admin', 'defaultTopicPerm', 'defaultGroupPerm', 'topicPerms', 'groupPerms']);
const NULLS = new Set(['', '~', 'null', 'Null', 'NULL']);
const TRUE_WORDS = new Set(['true', 'yes', 'on', 'y']);
const FALSE_WORDS = new Set(['false', 'no', 'off', 'n']);

const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Parses the text of one plain_acl.yml; `file` names it in errors.
 * @throws PlainAclFileError for invalid YAML, an unknown key or a value of the wrong kind.
 */
export function parsePlainAclFile(text: string, file: string): PlainAclFileData {
  // failsafe schema: scalars stay strings, as SnakeYAML gives a String bean property its text
  const doc = parseDocument(text, { schema: 'failsafe', uniqueKeys: true });
  if (doc.errors.length > 0) throw new PlainAclFileError(file, `not valid YAML: ${doc.errors[0]!.message.split('\n')[0]!.replace(/:\s*$/, '')}`);
  const root: unknown = doc.toJS();
  const empty: PlainAclFileData = { globalWhiteRemoteAddresses: [], accounts: [] };
  if (root === null || root === undefined || (typeof root === 'string' && NULLS.has(root.trim()))) return empty;
  if (!isMap(root)) throw new PlainAclFileError(file, 'the top level must be a mapping (globalWhiteRemoteAddresses, accounts)');
  for (const k of Object.keys(root)) {
    if (!TOP_KEYS.has(k)) throw new PlainAclFileError(file, `unknown key "${k}" (known: ${[...TOP_KEYS].join(', ')})`);
  }
  return {
    globalWhiteRemoteAddresses: stringList(root.globalWhiteRemoteAddresses, file, 'globalWhiteRemoteAddresses'),
    accounts: list(root.accounts, file, 'accounts').map((a, i) => account(a, file, `accounts[${i}]`)),
  };
}

function list(v: unknown, file: string, where: string): unknown[] {
  if (v === undefined || v === null || (typeof v === 'string' && NULLS.has(v.trim()))) return [];
  if (!Array.isArray(v)) throw new PlainAclFileError(file, `${where} must be a list`);
  return v;
}

function stringList(v: unknown, file: string, where: string): string[] {
  return list(v, file, where).map((item, i) => {
    if (typeof item !== 'string') throw new PlainAclFileError(file, `${where}[${i}] must be a string`);
    return item;
  }).filter((s) => !NULLS.has(s.trim()));
}

function scalar(v: unknown, file: string, where: string): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new PlainAclFileError(file, `${where} must be a string`);
  return NULLS.has(v.trim()) ? null : v;
}

function account(v: unknown, file: string, where: string): PlainAccessAccount {
  if (!isMap(v)) throw new PlainAclFileError(file, `${where} must be a mapping (accessKey, secretKey, ...)`);
  for (const k of Object.keys(v)) {
    if (!ACCOUNT_KEYS.has(k)) throw new PlainAclFileError(file, `${where}: unknown key "${k}" (known: ${[...ACCOUNT_KEYS].join(', ')})`);
  }
  const adminText = scalar(v.admin, file, `${where}.admin`);
  let admin = false;
  if (adminText !== null) {
    const w = adminText.trim().toLowerCase();
    if (TRUE_WORDS.has(w)) admin = true;
    else if (!FALSE_WORDS.has(w)) throw new PlainAclFileError(file, `${where}.admin must be true or false, not "${adminText}"`);
  }
  return {
    accessKey: scalar(v.accessKey, file, `${where}.accessKey`),
    secretKey: scalar(v.secretKey, file, `${where}.secretKey`),
    whiteRemoteAddress: scalar(v.whiteRemoteAddress, file, `${where}.whiteRemoteAddress`),
    admin,
    defaultTopicPerm: scalar(v.defaultTopicPerm, file, `${where}.defaultTopicPerm`),
    defaultGroupPerm: scalar(v.defaultGroupPerm, file, `${where}.defaultGroupPerm`),
    topicPerms: stringList(v.topicPerms, file, `${where}.topicPerms`),
    groupPerms: stringList(v.groupPerms, file, `${where}.groupPerms`),
  };
}
