/**
 * Broker → nameserver calls (mirrors RocketMQ `BrokerOuterAPI`).
 *
 * REGISTER_BROKER (103) to every nameserver in parallel: extFields brokerName, brokerAddr,
 * clusterName, haServerAddr, brokerId, compressed=false, bodyCrc32 (= crc32(body) & 0x7FFFFFFF);
 * body = RegisterBrokerBody JSON
 *   {"topicConfigSerializeWrapper":{"topicConfigTable":{...},"dataVersion":{...}},"filterServerList":[]}
 * UNREGISTER_BROKER (104): extFields brokerName, brokerAddr, clusterName, brokerId.
 * A failing nameserver is logged and does not affect the others.
 */
import { bodyCrc } from '../../common/bytes/crc32.js';
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { createRequestCommand } from '../../remoting/protocol/commands.js';
import type { RemotingClient } from '../../remoting/transport/remoting-client.js';

export interface BrokerIdentity {
  clusterName: string;
  brokerName: string;
  brokerAddr: string;
  brokerId: number;
  haServerAddr: string;
}

export interface RegisterOutcome {
  namesrvAddr: string;
  ok: boolean;
  /** Master address reported back to a slave, when any. */
  masterAddr?: string;
  /** The master's HA address reported back to a slave, when any. */
  haServerAddr?: string;
  error?: string;
}

export class BrokerOuterApi {
  private readonly logger: Logger;

  constructor(
    private readonly client: RemotingClient,
    private readonly namesrvAddrs: string[],
    private readonly timeoutMs: number,
    logger?: Logger,
  ) {
    this.logger = logger ?? silentLogger;
  }

  /** Registers with every nameserver; never rejects. */
  registerBrokerAll(id: BrokerIdentity, topicConfigSerializeWrapper: object): Promise<RegisterOutcome[]> {
    const body = Buffer.from(JSON.stringify({ topicConfigSerializeWrapper, filterServerList: [] }), 'utf8');
    const crc = bodyCrc(body);
    return Promise.all(
      this.namesrvAddrs.map(async (addr): Promise<RegisterOutcome> => {
        const request = createRequestCommand(
          RequestCode.REGISTER_BROKER,
          {
            brokerName: id.brokerName,
            brokerAddr: id.brokerAddr,
            clusterName: id.clusterName,
            haServerAddr: id.haServerAddr,
            brokerId: id.brokerId,
            compressed: false,
            bodyCrc32: crc,
          },
          body,
        );
        try {
          const response = await this.client.invokeSync(addr, request, this.timeoutMs);
          if (response.code !== ResponseCode.SUCCESS) {
            this.logger.warn(`register broker to nameserver ${addr} failed: code ${response.code} ${response.remark ?? ''}`);
            return { namesrvAddr: addr, ok: false, error: `code ${response.code}: ${response.remark ?? ''}` };
          }
          const masterAddr = response.extFields?.masterAddr;
          const haServerAddr = response.extFields?.haServerAddr;
          return {
            namesrvAddr: addr,
            ok: true,
            ...(masterAddr !== undefined ? { masterAddr: String(masterAddr) } : {}),
            ...(haServerAddr !== undefined ? { haServerAddr: String(haServerAddr) } : {}),
          };
        } catch (e) {
          this.logger.warn(`register broker to nameserver ${addr} failed: ${(e as Error).message}`);
          return { namesrvAddr: addr, ok: false, error: (e as Error).message };
        }
      }),
    );
  }

  /** Unregisters from every nameserver; never rejects. */
  async unregisterBrokerAll(id: BrokerIdentity): Promise<void> {
    await Promise.all(
      this.namesrvAddrs.map(async (addr) => {
        const request = createRequestCommand(RequestCode.UNREGISTER_BROKER, {
          brokerName: id.brokerName,
          brokerAddr: id.brokerAddr,
          clusterName: id.clusterName,
          brokerId: id.brokerId,
        });
        try {
          const response = await this.client.invokeSync(addr, request, this.timeoutMs);
          if (response.code !== ResponseCode.SUCCESS) this.logger.warn(`unregister broker from ${addr}: code ${response.code} ${response.remark ?? ''}`);
        } catch (e) {
          this.logger.warn(`unregister broker from ${addr} failed: ${(e as Error).message}`);
        }
      }),
    );
  }
}
