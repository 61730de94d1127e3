/**
 * The broker's own requests (registration and heartbeats to the nameserver, a slave's
 * synchronisation calls to its master) signed with `innerClientAuthenticationCredentials`, as
 * Apache's broker does through an AclClientRPCHook on its outer API client. Without them the
 * `initAuthenticationUser` (also a Super user of this configuration) signs, so that `tsmq start`
 * with authentication on can register with its own authenticating nameserver (tsmq choice; Apache
 * signs only with the inner credentials). With migrateAuthFromV1Enabled and neither set,
 * broker-parts.ts puts plain_acl.yml's first admin account into `innerCredentials`
 * (auth-migrator.ts). With none, nothing is signed (a master with authenticationEnabled then
 * refuses the slave).
 */
import type { AuthConfig } from '../../auth/auth-config.js';
import { signRemotingCommand } from '../../auth/acl-signature.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';

/** `{ beforeRequest }` for RemotingClient options when inner credentials are configured, else `{}`. */
export function innerRequestSigner(auth: AuthConfig): { beforeRequest?: (request: RemotingCommand) => void } {
  const credentials = auth.innerCredentials ?? (auth.initUser ? { accessKey: auth.initUser.username, secretKey: auth.initUser.password } : null);
  if (!credentials) return {};
  return { beforeRequest: (request) => void signRemotingCommand(request, credentials) };
}
