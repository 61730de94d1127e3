/**
 * Where ACL 1.0 configuration lives and how several files combine, as Apache 5.3.3's migration
 * reads them (auth/migration/v1/PlainPermissionManager):
 *
 *   <rocketmqHome>/conf/acl/**\/*.yml|*.yaml   every such file, sub-directories included
 *   <rocketmqHome>/<rocketmq.acl.plain.file>   default conf/plain_acl.yml, added when it exists
 *
 * An accessKey defined in several files is taken from the first file that defines it (files of
 * conf/acl in name order — Apache takes the directory's listing order, which the file system
 * decides — then the default file). globalWhiteRemoteAddresses of all files are concatenated.
 *
 * Difference from Apache: Apache creates an empty default file when it is missing; tsmq writes
 * nothing into the RocketMQ home and reads only what exists.
 */
import { existsSync, readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { parsePlainAclFile, PlainAclFileError, type PlainAccessAccount } from './plain-acl-file.js';

/** Where to look: the RocketMQ home and the default file relative to it. */
export interface PlainAclLocation {
  /** Apache's rocketmq.home.dir / $ROCKETMQ_HOME. */
  rocketmqHome: string;
  /** Apache's system property rocketmq.acl.plain.file, relative to the home (default conf/plain_acl.yml). */
  plainAclFile: string;
}

/** All ACL 1.0 files of a home, combined. */
export interface PlainAclConfig {
  /** The files read, in the order they were combined. */
  files: string[];
  /** One account per accessKey (the first file's wins). */
  accounts: PlainAccessAccount[];
  globalWhiteRemoteAddresses: string[];
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch (e) {
    throw new PlainAclFileError(p, `cannot be read: ${(e as Error).message}`);
  }
}

/** `*.yml`/`*.yaml` under `dir`, sub-directories first-come in name order; a directory reached twice (symlink loop) is read once. */
function ymlFilesUnder(dir: string, skip: string, visited = new Set<string>()): string[] {
  if (!existsSync(dir) || !isDirectory(dir)) return [];
  const real = realpathSync(dir);
  if (visited.has(real)) return [];
  visited.add(real);
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    if (full === skip) continue;
    if (isDirectory(full)) out.push(...ymlFilesUnder(full, skip, visited));
    else if (name.endsWith('.yml') || name.endsWith('.yaml')) out.push(full);
  }
  return out;
}

/** The files Apache would read for `loc`, existing ones only. */
export function plainAclFilesOf(loc: PlainAclLocation): string[] {
  const home = path.resolve(loc.rocketmqHome);
  const files = ymlFilesUnder(path.join(home, 'conf', 'acl'), path.join(home, 'conf', 'tools.yml'));
  const defaultFile = path.resolve(home, loc.plainAclFile);
  if (existsSync(defaultFile) && !files.includes(defaultFile)) files.push(defaultFile);
  return files;
}

/**
 * Reads and combines every ACL 1.0 file of `loc` (see the file comment).
 * @throws PlainAclFileError for an unreadable or malformed file or directory entry (nothing is
 *   migrated then).
 */
export function readPlainAclConfig(loc: PlainAclLocation): PlainAclConfig {
  const files = plainAclFilesOf(loc);
  const accounts: PlainAccessAccount[] = [];
  const seen = new Set<string | null>();
  const globalWhiteRemoteAddresses: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new PlainAclFileError(file, `cannot be read: ${(e as Error).message}`);
    }
    const data = parsePlainAclFile(text, file);
    globalWhiteRemoteAddresses.push(...data.globalWhiteRemoteAddresses);
    for (const a of data.accounts) {
      if (seen.has(a.accessKey)) continue;
      seen.add(a.accessKey);
      accounts.push(a);
    }
  }
  return { files, accounts, globalWhiteRemoteAddresses };
}
