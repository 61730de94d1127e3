/**
 * The broker's own requests (registration and heartbeats to the nameserver, a slave's
 * synchronisation calls to its master) signed with `innerClientAuthenticationCredentials`, as
 * Apache's broker does through an AclClientRPCHook on its outer API client. Without those
 * credentials nothing is signed (a master with authenticationEnabled then refuses the slave).
 */
import type { AuthConfig } from '../../auth/auth-config.js';
import { signRemotingCommand } from '../../auth/acl-signature.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';

/** `{ beforeRequest }` for RemotingClient options when inner credentials are configured, else `{}`. */
export function innerRequestSigner(auth: AuthConfig): { beforeRequest?: (request: RemotingCommand) => void } {
  const credentials = auth.innerCredentials;
  if (!credentials) return {};
  return { beforeRequest: (request) => void signRemotingCommand(request, credentials) };
}
