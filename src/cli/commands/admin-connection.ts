/**
 * How every `tsmq admin …` command connects, set from its options before it runs:
 *
 *   --tls                    TLS to the broker and nameserver (mqadmin's `-Dtls.enable=true`);
 *                            any server certificate is accepted, as mqadmin's default
 *                            `tls.test.mode.enable=true` does, unless --tls-ca is given
 *   --tls-ca <pem>           verify the server certificate against these CA certificates
 *                            (implies --tls; `tsmq start --tls` writes its certificate to
 *                            <store>/tls/tsmq-local.crt)
 *   --access-key <ak>, --secret-key <sk>
 *                            ACL 2.0 credentials: every request is signed like Apache's
 *                            AclClientRPCHook (mqadmin reads them from conf/tools.yml); default
 *                            $TSMQ_ACCESS_KEY / $TSMQ_SECRET_KEY. One without the other is an error.
 *
 * Without them a broker with TLS `enforcing` closes the connection and one with
 * `authenticationEnabled=true` refuses every request (NO_PERMISSION 16), as for mqadmin.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { signRemotingCommand } from '../../auth/acl-signature.js';
import type { RemotingClientOptions } from '../../remoting/transport/remoting-client.js';

export interface AdminConnectionOptions {
  tls?: boolean;
  tlsCa?: string;
  accessKey?: string;
  secretKey?: string;
}

let current: Pick<RemotingClientOptions, 'tls' | 'beforeRequest'> = {};

/** Adds --tls, --tls-ca, --access-key and --secret-key to an admin command. */
export function withConnectionOptions(cmd: Command): Command {
  return cmd
    .option('--tls', 'connect with TLS (any server certificate is accepted unless --tls-ca is given)')
    .option('--tls-ca <pem>', 'CA certificate file to verify the server certificate (implies --tls)')
    .option('--access-key <accessKey>', 'ACL 2.0 access key to sign requests with (default $TSMQ_ACCESS_KEY)')
    .option('--secret-key <secretKey>', 'ACL 2.0 secret key (default $TSMQ_SECRET_KEY)');
}

/**
 * Sets the connection settings of this admin process from a command's options (and the
 * environment for the credentials). @throws Error for a key without its secret (or the other way
 * round) or an unreadable --tls-ca file.
 */
export function setAdminConnection(o: AdminConnectionOptions, env: NodeJS.ProcessEnv = process.env): void {
  const accessKey = o.accessKey ?? env.TSMQ_ACCESS_KEY;
  const secretKey = o.secretKey ?? env.TSMQ_SECRET_KEY;
  if ((accessKey === undefined) !== (secretKey === undefined)) {
    throw new Error('--access-key and --secret-key (or TSMQ_ACCESS_KEY and TSMQ_SECRET_KEY) go together: one is missing');
  }
  let ca: Buffer | undefined;
  if (o.tlsCa !== undefined) {
    try {
      ca = readFileSync(o.tlsCa);
    } catch (e) {
      throw new Error(`--tls-ca ${o.tlsCa}: ${(e as Error).message}`);
    }
  }
  const credentials = accessKey !== undefined && secretKey !== undefined ? { accessKey, secretKey } : undefined;
  current = {
    ...(o.tls || ca ? { tls: ca ? { ca, rejectUnauthorized: true } : { rejectUnauthorized: false } } : {}),
    ...(credentials ? { beforeRequest: (request) => void signRemotingCommand(request, credentials) } : {}),
  };
}

/** RemotingClient options for an admin command: `extra` plus the TLS and signing settings. */
export function adminClientOptions(extra: RemotingClientOptions = {}): RemotingClientOptions {
  return { ...extra, ...current };
}
