/**
 * `tsmq admin delete-expired-commitlog -b <host:port>`: asks a running broker to delete its
 * expired CommitLog files now, at any hour (RocketMQ `mqadmin deleteExpiredCommitLog`, request
 * code DELETE_EXPIRED_COMMITLOG = 329; the store runs a cleaning pass and keeps the manual
 * trigger armed for the next 20 passes). Only files older than fileReservedTime are deleted;
 * never the file being written. `--json`: {"brokerAddr", "success": true, "message"}; a refusal
 * is an error (exit 1) either way.
 */
import type { Command } from 'commander';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { createRequestCommand } from '../../remoting/protocol/commands.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { RemotingClient } from '../../remoting/transport/remoting-client.js';
import { adminClientOptions } from './admin-connection.js';
import { adminCommand, printJson, timeoutOf, withCommonOptions, type CommonAdminOptions } from './admin-support.js';

const DEFAULT_TIMEOUT_MS = 10_000;

/** Sends DELETE_EXPIRED_COMMITLOG to `brokerAddr` ("host:port") and returns the response. @throws remoting errors. */
export async function requestDeleteExpiredCommitLog(brokerAddr: string, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<RemotingCommand> {
  const client = new RemotingClient(adminClientOptions());
  try {
    return await client.invokeSync(brokerAddr, createRequestCommand(RequestCode.DELETE_EXPIRED_COMMITLOG), timeoutMs);
  } finally {
    await client.close();
  }
}

/** Text for a response: success, or why the broker refused. */
export function describeDeleteExpiredResponse(brokerAddr: string, response: RemotingCommand): { ok: boolean; message: string } {
  if (response.code === ResponseCode.SUCCESS) return { ok: true, message: `broker ${brokerAddr}: expired CommitLog files deleted` };
  if (response.code === ResponseCode.REQUEST_CODE_NOT_SUPPORTED) {
    return { ok: false, message: `broker ${brokerAddr} does not support DELETE_EXPIRED_COMMITLOG (${RequestCode.DELETE_EXPIRED_COMMITLOG})` };
  }
  return { ok: false, message: `broker ${brokerAddr} refused: code ${response.code}${response.remark ? `, ${response.remark}` : ''}` };
}

/** Registers `admin delete-expired-commitlog` (creating the `admin` command group when missing). */
export function registerAdminCommands(program: Command): void {
  withCommonOptions(
    adminCommand(program)
      .command('delete-expired-commitlog')
      .description('delete expired CommitLog files on a broker now, at any hour (request code 329)')
      .requiredOption('-b, --broker-addr <host:port>', 'broker address'),
  ).action(async (opts: CommonAdminOptions & { brokerAddr: string }) => {
    const response = await requestDeleteExpiredCommitLog(opts.brokerAddr, timeoutOf(opts));
    const { ok, message } = describeDeleteExpiredResponse(opts.brokerAddr, response);
    if (!ok) throw new Error(message);
    if (opts.json) {
      printJson({ brokerAddr: opts.brokerAddr, success: true, message });
      return;
    }
    console.log(message);
  });
}
