/**
 * The broker's user and ACL store with Apache's management rules (AuthenticationMetadataManagerImpl,
 * AuthorizationMetadataManagerImpl): what the admin codes 3001-3010 call and what the remoting
 * and gRPC checks read (AuthMetadata).
 *
 *   createUser   username/password required; type defaults to Normal, status to enable;
 *                "The user is existed" when taken
 *   updateUser   "The user is not exist" when missing; only the given password/type/status change
 *   deleteUser   removes the user and its ACL; no error when missing
 *   createAcl /  the subject's user must exist ("The subject of User:x is not exist."); policies
 *   updateAcl    are merged into an existing ACL per policy type, entries per resource (both codes
 *                behave the same, as in Apache)
 *   deleteAcl    one resource of one policy type (default Custom), or the whole ACL when no
 *                resource is given; "The subject is not exist." / "The acl is not exist."
 *
 * Every change is durable (users.json / acls.json written and fsynced) before the call resolves.
 * @throws AuthenticationError / AuthorizationError with Apache's messages.
 */
import * as path from 'node:path';
import type { Logger } from '../../common/logging/logger.js';
import type { FileSystem } from '../../common/fs/file-system.js';
import { AuthenticationError, AuthorizationError } from '../../auth/auth-error.js';
import type { AuthMetadata } from '../../auth/auth-evaluator.js';
import { resourceKey, sameResource, type Acl, type PolicyType, type Resource, type User } from '../../auth/auth-model.js';
import { validateUserInput, usernameOfSubject, type UserInput } from '../../auth/auth-info-codec.js';
import type { AuthConfig } from '../../auth/auth-config.js';
import { UserStore } from './user-store.js';
import { AclStore } from './acl-store.js';

export interface AuthMetadataManagerOptions {
  fs?: FileSystem;
  logger?: Logger;
}

export class AuthMetadataManager implements AuthMetadata {
  private constructor(
    readonly users: UserStore,
    readonly acls: AclStore,
  ) {}

  /**
   * Loads `<configDir>/users.json` and `acls.json`, then creates initAuthenticationUser and
   * innerClientAuthenticationCredentials as Super users when no user of that name exists.
   * @throws ConfigFileCorruptError when a file and its backup are unreadable.
   */
  static async open(configDir: string, config: Pick<AuthConfig, 'initUser' | 'innerCredentials'>, opts: AuthMetadataManagerOptions = {}): Promise<AuthMetadataManager> {
    const users = new UserStore(path.join(configDir, 'users.json'), opts);
    const acls = new AclStore(path.join(configDir, 'acls.json'), opts);
    users.load();
    acls.load();
    const m = new AuthMetadataManager(users, acls);
    const initial: User[] = [];
    if (config.initUser) initial.push({ username: config.initUser.username, password: config.initUser.password, userType: 'Super', userStatus: 'enable' });
    if (config.innerCredentials) initial.push({ username: config.innerCredentials.accessKey, password: config.innerCredentials.secretKey, userType: 'Super', userStatus: 'enable' });
    for (const u of initial) {
      if (!users.get(u.username)) {
        await users.put(u);
        opts.logger?.info(`auth: created the initial super user ${JSON.stringify(u.username)}`);
      }
    }
    return m;
  }

  getUser(username: string): User | undefined {
    return this.users.get(username);
  }

  getAcl(subject: string): Acl | undefined {
    return this.acls.get(subject);
  }

  isSuperUser(username: string): boolean {
    return this.users.get(username)?.userType === 'Super';
  }

  async createUser(input: UserInput): Promise<void> {
    validateUserInput(input, true);
    if (this.users.get(input.username)) throw new AuthenticationError('The user is existed');
    await this.users.put({ username: input.username, password: input.password!, userType: input.userType ?? 'Normal', userStatus: input.userStatus ?? 'enable' });
  }

  async updateUser(input: UserInput): Promise<void> {
    validateUserInput(input, false);
    const old = this.users.get(input.username);
    if (!old) throw new AuthenticationError('The user is not exist');
    await this.users.put({
      username: old.username,
      password: input.password && input.password.trim() !== '' ? input.password : old.password,
      userType: input.userType ?? old.userType,
      userStatus: input.userStatus ?? old.userStatus,
    });
  }

  async deleteUser(username: string): Promise<void> {
    if (!username || username.trim() === '') throw new AuthenticationError('username can not be blank');
    await Promise.all([this.users.remove(username), this.acls.remove(`User:${username}`)]);
  }

  listUsers(filter?: string): User[] {
    return this.users.list(filter);
  }

  /** createAcl and updateAcl (Apache gives both the same merge semantics). */
  async upsertAcl(acl: Acl): Promise<void> {
    const name = usernameOfSubject(acl.subject);
    if (name === null || !this.users.get(name)) throw new AuthorizationError(`The subject of ${acl.subject} is not exist.`);
    const old = this.acls.get(acl.subject);
    if (!old) {
      await this.acls.put(acl);
      return;
    }
    const merged: Acl = structuredClone(old);
    for (const np of acl.policies) {
      const op = merged.policies.find((p) => p.policyType === np.policyType);
      if (!op) {
        merged.policies.push(structuredClone(np));
        continue;
      }
      for (const ne of np.entries) {
        const i = op.entries.findIndex((e) => sameResource(e.resource, ne.resource));
        if (i < 0) op.entries.push(structuredClone(ne));
        else op.entries[i] = { ...structuredClone(ne), resource: op.entries[i]!.resource };
      }
    }
    await this.acls.put(merged);
  }

  async deleteAcl(subject: string, policyType: PolicyType | null, resource: Resource | null): Promise<void> {
    const name = usernameOfSubject(subject);
    if (name === null) throw new AuthorizationError('The subject is null.');
    if (!this.users.get(name)) throw new AuthorizationError('The subject is not exist.');
    const old = this.acls.get(subject);
    if (!old) throw new AuthorizationError('The acl is not exist.');
    if (!resource) {
      await this.acls.remove(subject);
      return;
    }
    const type = policyType ?? 'Custom';
    const next: Acl = structuredClone(old);
    for (const p of next.policies) if (p.policyType === type) p.entries = p.entries.filter((e) => !sameResource(e.resource, resource));
    next.policies = next.policies.filter((p) => p.entries.length > 0);
    if (next.policies.length === 0) await this.acls.remove(subject);
    else await this.acls.put(next);
  }

  /** The ACL of an existing subject (undefined when it has none). */
  getAclOfSubject(subject: string): Acl | undefined {
    const name = usernameOfSubject(subject);
    if (name === null || !this.users.get(name)) throw new AuthorizationError('The subject is not exist.');
    return this.acls.get(subject);
  }

  /**
   * Apache listAcl: subjects containing `subjectFilter`; when `resourceFilter` is given and the
   * subject key does not contain it, only entries whose resource key contains it are kept.
   */
  listAcls(subjectFilter?: string, resourceFilter?: string): Acl[] {
    const sf = subjectFilter?.trim() ? subjectFilter : undefined;
    const rf = resourceFilter?.trim() ? resourceFilter : undefined;
    const out: Acl[] = [];
    for (const acl of this.acls.all()) {
      if (sf && !acl.subject.includes(sf)) continue;
      const copy = structuredClone(acl);
      if (rf && !copy.subject.includes(rf)) {
        for (const p of copy.policies) p.entries = p.entries.filter((e) => resourceKey(e.resource).includes(rf));
        copy.policies = copy.policies.filter((p) => p.entries.length > 0);
      }
      if (copy.policies.length > 0) out.push(copy);
    }
    return out;
  }
}
