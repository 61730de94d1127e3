/**
 * ACL 2.0 users, durable in `<storePathRootDir>/config/users.json` with the crash-safe write and
 * `.bak` rules of every config file (config-file.ts). Apache keeps them in RocksDB under
 * authConfigPath; the document here is `{"users":[UserInfo...]}` (auth-model.ts), sorted by name.
 * Passwords are stored as given, as Apache does (they are HMAC keys, not hashes): protect the
 * config directory like a key file.
 */
import { ConfigManager, type ConfigManagerOptions } from '../config-file/config-manager.js';
import { userStatusOf, userToInfo, userTypeOf, type User } from '../../auth/auth-model.js';

export class UserStore extends ConfigManager {
  private readonly users = new Map<string, User>();

  constructor(filePath: string, opts: ConfigManagerOptions = {}) {
    super(filePath, opts);
  }

  get(username: string): User | undefined {
    return this.users.get(username);
  }

  /** Every user whose name contains `filter` (all when blank), by name. */
  list(filter?: string): User[] {
    const f = filter?.trim() ? filter : undefined;
    return [...this.users.values()].filter((u) => !f || u.username.includes(f)).sort((a, b) => (a.username < b.username ? -1 : a.username > b.username ? 1 : 0));
  }

  /** Adds or replaces, then persists; resolves when durable. */
  put(user: User): Promise<void> {
    this.users.set(user.username, { ...user });
    return this.persist();
  }

  /** Removes (no-op when absent), then persists; resolves when durable. */
  remove(username: string): Promise<void> {
    if (!this.users.delete(username)) return Promise.resolve();
    return this.persist();
  }

  encode(): object {
    return { users: this.list().map(userToInfo) };
  }

  protected decode(doc: Record<string, unknown>): void {
    const raw = doc.users ?? [];
    if (!Array.isArray(raw)) throw new Error('"users" is not an array');
    const next = new Map<string, User>();
    raw.forEach((u, i) => {
      const o = u as Record<string, unknown> | null;
      if (!o || typeof o !== 'object' || typeof o.username !== 'string' || typeof o.password !== 'string') throw new Error(`users[${i}] needs a username and a password`);
      next.set(o.username, { username: o.username, password: o.password, userType: userTypeOf(o.userType) ?? 'Normal', userStatus: userStatusOf(o.userStatus) ?? 'enable' });
    });
    this.users.clear();
    for (const [k, v] of next) this.users.set(k, v);
  }
}
