/**
 * Pop state replication (docs/internals/pop.md "Replicas and failover"). Apache keeps pop
 * checkpoints and acks as messages of its revive topic in the CommitLog, so its slave holds them
 * through replication; tsmq keeps pop state in its own files (pop-state-store.ts), so a replica
 * copies its master's table the way it copies consumer offsets (slave-synchronize.ts):
 *
 *   GET_ALL_POP_STATE (tsmq-only request code 99001; Apache has none)
 *     request extFields (optional) instanceId, changeCount: the master's change stamp the replica
 *       holds already.
 *     reply SUCCESS, extFields instanceId, changeCount (the master's current stamp), and
 *       - notModified=true and no body when the stamp is the one sent;
 *       - otherwise the body {"format":1,"maxVersion":<n>,"queues":[PopSnapshotQueue...]}.
 *
 * The replica (`PopSlaveSync.sync`, every min(POP_STATE_SYNC_INTERVAL_MS,
 * slaveSynchronizeInterval) while it follows a master) replaces its whole table with the
 * master's unless it is a master itself by then (a promotion during the request), and persists
 * it. So a replica promoted by a failover hands out again only what the old master popped in the
 * last sync period (plus what it popped while unreachable), and the receipt handles the old master
 * issued for in-flight messages stay valid there (same versions). Errors (network, an error code,
 * a malformed body) throw with a reason; a master that does not know the code (an older tsmq) is
 * logged once and not asked again until it answers otherwise.
 */
import type { Logger } from '../../common/logging/logger.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { createRequestCommand, createResponseCommand } from '../../remoting/protocol/commands.js';
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingClient } from '../../remoting/transport/remoting-client.js';
import { asObject } from '../config-file/config-manager.js';
import { parseLenientJson } from '../config-file/lenient-json.js';
import type { PopStateStore } from './pop-state-store.js';

/** Period of the replica's pop state sync (ms), bounded by slaveSynchronizeInterval. */
export const POP_STATE_SYNC_INTERVAL_MS = 1000;

/** Master side: the GET_ALL_POP_STATE handler (see the file comment). */
export function buildPopStateSyncHandler(state: PopStateStore): [number, RequestHandler] {
  return [
    RequestCode.GET_ALL_POP_STATE,
    ({ request }) => {
      const ext = request.extFields ?? {};
      const stamp = { instanceId: state.instanceId, changeCount: String(state.changeCount) };
      if (ext.instanceId === stamp.instanceId && String(ext.changeCount ?? '') === stamp.changeCount) {
        return createResponseCommand(request, ResponseCode.SUCCESS, null, { ...stamp, notModified: 'true' });
      }
      const doc = state.exportState();
      const body = Buffer.from(JSON.stringify({ format: 1, maxVersion: doc.maxVersion, queues: doc.queues }), 'utf8');
      return createResponseCommand(request, ResponseCode.SUCCESS, null, { instanceId: doc.instanceId, changeCount: String(doc.changeCount) }, body);
    },
  ];
}

export interface PopStateSyncReport {
  /** Tables adopted from the master. */
  replaced: number;
  /** Rounds answered notModified. */
  unchanged: number;
  /** Queue states in the last adopted table. */
  lastQueues: number;
}

/** Replica side (see the file comment). */
export class PopSlaveSync {
  private readonly report: PopStateSyncReport = { replaced: 0, unchanged: 0, lastQueues: 0 };
  /** The master's stamp adopted last, and this store's change count right after adopting it. */
  private held: { addr: string; instanceId: string; changeCount: string; localChangeCount: number } | null = null;
  private unsupportedAt: string | null = null;

  /** @param isMaster true while this broker pops itself (PopService.isMaster): nothing is adopted then. */
  constructor(
    private readonly state: PopStateStore,
    private readonly isMaster: () => boolean,
    private readonly logger: Logger,
    private readonly timeoutMs = 3000,
  ) {}

  /** One GET_ALL_POP_STATE round with `masterAddr`; resolves whether the master's table was adopted. */
  async sync(client: RemotingClient, masterAddr: string): Promise<boolean> {
    if (this.isMaster()) return false;
    // a table changed here since (this replica popped as master meanwhile) is replaced in full
    const held = this.held?.addr === masterAddr && this.held.localChangeCount === this.state.changeCount ? this.held : null;
    const request = createRequestCommand(RequestCode.GET_ALL_POP_STATE, held ? { instanceId: held.instanceId, changeCount: held.changeCount } : null);
    const r = await client.invokeSync(masterAddr, request, this.timeoutMs);
    if (r.code === ResponseCode.REQUEST_CODE_NOT_SUPPORTED) {
      if (this.unsupportedAt !== masterAddr) this.logger.warn(`pop state sync: master ${masterAddr} does not serve GET_ALL_POP_STATE (an older tsmq?); pop state is not replicated from it`);
      this.unsupportedAt = masterAddr;
      return false;
    }
    this.unsupportedAt = null;
    if (r.code !== ResponseCode.SUCCESS) throw new Error(`GET_ALL_POP_STATE: code ${r.code} ${r.remark ?? ''}`);
    const ext = r.extFields ?? {};
    const stamp = { addr: masterAddr, instanceId: String(ext.instanceId ?? ''), changeCount: String(ext.changeCount ?? ''), localChangeCount: 0 };
    if (ext.notModified === 'true' || ext.notModified === true) {
      this.report.unchanged++;
      return false;
    }
    const doc = asObject(parseLenientJson((r.body ?? Buffer.alloc(0)).toString('utf8')), 'pop state');
    if (doc.format !== 1) throw new Error(`GET_ALL_POP_STATE: unknown format ${String(doc.format)}`);
    if (this.isMaster()) return false; // promoted while the request was out: the table is ours now
    const durable = this.state.replaceWith(doc.queues, Number(doc.maxVersion ?? 0));
    this.held = { ...stamp, localChangeCount: this.state.changeCount };
    this.report.replaced++;
    this.report.lastQueues = this.state.table.size;
    await durable;
    return true;
  }

  stats(): PopStateSyncReport {
    return { ...this.report };
  }
}
