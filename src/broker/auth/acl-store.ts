/**
 * ACL 2.0 policies per subject, durable in `<storePathRootDir>/config/acls.json` with the
 * crash-safe write and `.bak` rules of every config file (config-file.ts). The document is
 * `{"acls":[AclInfo...]}` (auth-model.ts), sorted by subject.
 */
import { ConfigManager, type ConfigManagerOptions } from '../config-file/config-manager.js';
import { aclToInfo, type Acl } from '../../auth/auth-model.js';
import { decodeAclInfo } from '../../auth/auth-info-codec.js';

export class AclStore extends ConfigManager {
  private readonly acls = new Map<string, Acl>();

  constructor(filePath: string, opts: ConfigManagerOptions = {}) {
    super(filePath, opts);
  }

  get(subject: string): Acl | undefined {
    return this.acls.get(subject);
  }

  all(): Acl[] {
    return [...this.acls.values()].sort((a, b) => (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : 0));
  }

  put(acl: Acl): Promise<void> {
    this.acls.set(acl.subject, structuredClone(acl));
    return this.persist();
  }

  remove(subject: string): Promise<void> {
    if (!this.acls.delete(subject)) return Promise.resolve();
    return this.persist();
  }

  encode(): object {
    return { acls: this.all().map(aclToInfo) };
  }

  protected decode(doc: Record<string, unknown>): void {
    const raw = doc.acls ?? [];
    if (!Array.isArray(raw)) throw new Error('"acls" is not an array');
    const next = new Map<string, Acl>();
    raw.forEach((a, i) => {
      try {
        const acl = decodeAclInfo(Buffer.from(JSON.stringify(a)), undefined);
        next.set(acl.subject, acl);
      } catch (e) {
        throw new Error(`acls[${i}]: ${(e as Error).message}`);
      }
    });
    this.acls.clear();
    for (const [k, v] of next) this.acls.set(k, v);
  }
}
