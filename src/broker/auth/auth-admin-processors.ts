/**
 * ACL 2.0 admin request codes on the broker (Apache AdminBrokerProcessor createUser ... listAcl),
 * what `mqadmin createUser/updateUser/deleteUser/getUser/listUser/createAcl/updateAcl/deleteAcl/
 * getAcl/listAcl` send:
 *
 *   3001 AUTH_CREATE_USER  header username, body UserInfo      → SUCCESS
 *   3002 AUTH_UPDATE_USER  header username, body UserInfo      → SUCCESS
 *   3003 AUTH_DELETE_USER  header username                     → SUCCESS (also when missing)
 *   3004 AUTH_GET_USER     header username                     → SUCCESS, body UserInfo (none when missing)
 *   3005 AUTH_LIST_USER    header filter                       → SUCCESS, body [UserInfo] (none when empty)
 *   3006 AUTH_CREATE_ACL   header subject, body AclInfo        → SUCCESS
 *   3007 AUTH_UPDATE_ACL   header subject, body AclInfo        → SUCCESS
 *   3008 AUTH_DELETE_ACL   header subject, policyType, resource → SUCCESS
 *   3009 AUTH_GET_ACL      header subject                      → SUCCESS, body AclInfo (none when missing)
 *   3010 AUTH_LIST_ACL     header subjectFilter, resourceFilter → SUCCESS, body [AclInfo]
 *
 * Errors as Apache: a blank username → INVALID_PARAMETER (29) "The username is blank"; creating or
 * updating a Super user, or changing/deleting one, by a non-super caller → SYSTEM_ERROR /
 * NO_PERMISSION with Apache's remarks; a rule broken (auth-metadata-manager.ts) → NO_PERMISSION (16)
 * with its message; anything else → SYSTEM_ERROR "An system error occurred, please try again later.".
 * Bodies are Apache's JSON (auth-model.ts). User info bodies include the password, as Apache's.
 */
import type { Logger } from '../../common/logging/logger.js';
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { getOptionalString } from '../../remoting/headers/header-fields.js';
import { AuthenticationError, AuthorizationError } from '../../auth/auth-error.js';
import { ACCESS_KEY } from '../../auth/acl-signature.js';
import { aclToInfo, parseResource, policyTypeOf, userToInfo } from '../../auth/auth-model.js';
import { decodeAclInfo, decodeUserInfo } from '../../auth/auth-info-codec.js';
import type { AuthMetadataManager } from './auth-metadata-manager.js';

const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v), 'utf8');

export function buildAuthAdminHandlers(manager: AuthMetadataManager, logger: Logger): Map<number, RequestHandler> {
  const ok = (request: RemotingCommand, body?: Buffer | null): RemotingCommand => createResponseCommand(request, ResponseCode.SUCCESS, null, null, body ?? null);

  /** Runs `fn` and turns a refusal into Apache's answer. */
  const guarded = (what: string, fn: (request: RemotingCommand) => Promise<RemotingCommand> | RemotingCommand): RequestHandler =>
    async ({ request }) => {
      try {
        return await fn(request);
      } catch (e) {
        if (e instanceof AuthenticationError || e instanceof AuthorizationError) {
          return createResponseCommand(request, ResponseCode.NO_PERMISSION, e.message);
        }
        logger.error(`auth admin ${what} failed: ${(e as Error).stack ?? e}`);
        return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, 'An system error occurred, please try again later.');
      }
    };

  /** Apache isNotSuperUserLogin: no AccessKey (authentication off) counts as super. */
  const callerIsNotSuper = (request: RemotingCommand): boolean => {
    const ak = getOptionalString(request.extFields, ACCESS_KEY);
    if (!ak) return false;
    return !manager.isSuperUser(ak);
  };

  const userChange = (what: 'create' | 'update'): RequestHandler =>
    guarded(`${what}User`, async (request) => {
      const username = getOptionalString(request.extFields, 'username');
      if (!username) return createResponseCommand(request, ResponseCode.INVALID_PARAMETER, 'The username is blank');
      const input = decodeUserInfo(request.body, username);
      if (input.userType === 'Super' && callerIsNotSuper(request)) {
        return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `The super user can only be ${what} by super user`);
      }
      if (what === 'create') {
        await manager.createUser(input);
      } else {
        const old = manager.getUser(username);
        if (!old) throw new AuthenticationError('The user is not exist');
        if (old.userType === 'Super' && callerIsNotSuper(request)) throw new AuthenticationError('The super user can only be update by super user');
        await manager.updateUser(input);
      }
      return ok(request);
    });

  const aclChange = (what: string): RequestHandler =>
    guarded(what, async (request) => {
      const acl = decodeAclInfo(request.body, getOptionalString(request.extFields, 'subject'));
      await manager.upsertAcl(acl);
      return ok(request);
    });

  return new Map<number, RequestHandler>([
    [RequestCode.AUTH_CREATE_USER, userChange('create')],
    [RequestCode.AUTH_UPDATE_USER, userChange('update')],
    [
      RequestCode.AUTH_DELETE_USER,
      guarded('deleteUser', async (request) => {
        const username = getOptionalString(request.extFields, 'username') ?? '';
        const user = manager.getUser(username);
        if (!user) return ok(request);
        if (user.userType === 'Super' && callerIsNotSuper(request)) throw new AuthenticationError('The super user can only be update by super user');
        await manager.deleteUser(username);
        return ok(request);
      }),
    ],
    [
      RequestCode.AUTH_GET_USER,
      guarded('getUser', (request) => {
        const username = getOptionalString(request.extFields, 'username');
        if (!username || username.trim() === '') return createResponseCommand(request, ResponseCode.INVALID_PARAMETER, 'The username is blank');
        const user = manager.getUser(username);
        return ok(request, user ? json(userToInfo(user)) : null);
      }),
    ],
    [
      RequestCode.AUTH_LIST_USER,
      guarded('listUser', (request) => {
        const users = manager.listUsers(getOptionalString(request.extFields, 'filter'));
        return ok(request, users.length ? json(users.map(userToInfo)) : null);
      }),
    ],
    [RequestCode.AUTH_CREATE_ACL, aclChange('createAcl')],
    [RequestCode.AUTH_UPDATE_ACL, aclChange('updateAcl')],
    [
      RequestCode.AUTH_DELETE_ACL,
      guarded('deleteAcl', async (request) => {
        const subject = getOptionalString(request.extFields, 'subject') ?? '';
        const policyType = policyTypeOf(getOptionalString(request.extFields, 'policyType'));
        const resource = parseResource(getOptionalString(request.extFields, 'resource'));
        await manager.deleteAcl(subject, policyType, resource);
        return ok(request);
      }),
    ],
    [
      RequestCode.AUTH_GET_ACL,
      guarded('getAcl', (request) => {
        const acl = manager.getAclOfSubject(getOptionalString(request.extFields, 'subject') ?? '');
        return ok(request, acl ? json(aclToInfo(acl)) : null);
      }),
    ],
    [
      RequestCode.AUTH_LIST_ACL,
      guarded('listAcl', (request) => {
        const acls = manager.listAcls(getOptionalString(request.extFields, 'subjectFilter'), getOptionalString(request.extFields, 'resourceFilter'));
        return ok(request, acls.length ? json(acls.map(aclToInfo)) : null);
      }),
    ],
  ]);
}
