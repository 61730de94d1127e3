/**
 * In-process broker for processor tests (not a test file): BrokerController.create with a
 * FakeMessageStore (or a given store), a ManualClock, a temp storePathRootDir and no sockets.
 * Requests go straight to the registered handlers over FakeChannels.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerController } from '../../../../src/broker/broker-controller.js';
import { silentLogger, type Logger } from '../../../../src/common/logging/logger.js';
import { ManualClock } from '../../../../src/common/time/clock.js';
import type { MessageStore } from '../../../../src/store/message-store.js';
import type { RemotingChannel } from '../../../../src/remoting/processor/request-processor.js';
import type { ExtFieldValue, RemotingCommand } from '../../../../src/remoting/protocol/remoting-command.js';
import { createRequestCommand } from '../../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../../src/remoting/codes/request-code.js';
import { encodeProperties } from '../../../../src/common/message/properties.js';
import { FakeMessageStore } from './fake-message-store.js';

let channelSeq = 0;

export class FakeChannel implements RemotingChannel {
  readonly id = `fake-${++channelSeq}`;
  readonly sent: RemotingCommand[] = [];
  closed = false;
  private readonly listeners: Array<() => void> = [];
  private waiters: Array<(cmd: RemotingCommand) => void> = [];

  constructor(readonly remoteAddress = '127.0.0.1:50001') {}

  send(cmd: RemotingCommand): void {
    if (this.closed) return;
    this.sent.push(cmd);
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f(cmd);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const l of this.listeners) l();
  }

  onClose(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Resolves with the next command sent on this channel. */
  nextSent(): Promise<RemotingCommand> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

export interface HarnessOptions {
  config?: Record<string, string>;
  store?: MessageStore;
  clockStartMs?: number;
  clock?: ManualClock;
  /** storePathRootDir to use (removed at close); default a fresh temp dir. */
  dir?: string;
  /** Broker logger (default silent). */
  logger?: Logger;
}

export class BrokerHarness {
  readonly channel = new FakeChannel();

  private constructor(
    readonly broker: BrokerController,
    readonly store: MessageStore,
    readonly clock: ManualClock,
    readonly dir: string,
  ) {}

  static async create(opts: HarnessOptions = {}): Promise<BrokerHarness> {
    const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'tsmq-broker-'));
    const clock = opts.clock ?? new ManualClock(opts.clockStartMs ?? 1_700_000_000_000);
    const store = opts.store ?? new FakeMessageStore(clock);
    const broker = await BrokerController.create({
      brokerConfig: { storePathRootDir: dir, namesrvAddr: '', listenPort: '10911', ...(opts.config ?? {}) },
      clock,
      logger: opts.logger ?? silentLogger,
      store,
    });
    return new BrokerHarness(broker, store, clock, dir);
  }

  get fake(): FakeMessageStore {
    if (!(this.store instanceof FakeMessageStore)) throw new Error('not a fake store');
    return this.store;
  }

  get ctx() {
    return this.broker.ctx;
  }

  /** Runs the handler for `code`; returns its reply (null = no reply now). */
  async invoke(code: number, extFields: Record<string, ExtFieldValue> | null, body?: Buffer | null, channel: FakeChannel = this.channel): Promise<RemotingCommand | null> {
    const handler = this.broker.handlerFor(code);
    if (!handler) throw new Error(`no handler for ${code}`);
    const request = createRequestCommand(code, extFields, body ?? null);
    return handler({ channel, request });
  }

  /** Like invoke but asserts a reply. */
  async call(code: number, extFields: Record<string, ExtFieldValue> | null, body?: Buffer | null, channel?: FakeChannel): Promise<RemotingCommand> {
    const r = await this.invoke(code, extFields, body, channel);
    if (!r) throw new Error(`request ${code} got no reply`);
    return r;
  }

  /** SEND_MESSAGE_V2 the way ali-ons sends it. */
  send(topic: string, body: Buffer | string, opts: { tags?: string; queueId?: number; props?: Record<string, string>; reconsumeTimes?: number; maxReconsumeTimes?: number; sysFlag?: number } = {}): Promise<RemotingCommand> {
    const props = new Map<string, string>();
    if (opts.tags) props.set('TAGS', opts.tags);
    for (const [k, v] of Object.entries(opts.props ?? {})) props.set(k, v);
    const ext: Record<string, ExtFieldValue> = {
      a: 'PID_TEST',
      b: topic,
      c: 'TBW102',
      d: 4,
      e: opts.queueId ?? 0,
      f: opts.sysFlag ?? 0,
      g: this.clock.nowMs(),
      h: 0,
      i: encodeProperties(props),
      j: opts.reconsumeTimes ?? 0,
      k: false,
    };
    if (opts.maxReconsumeTimes !== undefined) ext.l = opts.maxReconsumeTimes;
    return this.call(RequestCode.SEND_MESSAGE_V2, ext, typeof body === 'string' ? Buffer.from(body) : body);
  }

  /** PULL_MESSAGE with ali-ons' defaults (sysFlag 6 = suspend + subscription). */
  pull(group: string, topic: string, queueId: number, queueOffset: number, opts: { subscription?: string; sysFlag?: number; suspendTimeoutMillis?: number; maxMsgNums?: number; commitOffset?: number; channel?: FakeChannel } = {}): Promise<RemotingCommand | null> {
    return this.invoke(
      RequestCode.PULL_MESSAGE,
      {
        consumerGroup: group,
        topic,
        queueId,
        queueOffset,
        maxMsgNums: opts.maxMsgNums ?? 32,
        sysFlag: opts.sysFlag ?? 6,
        commitOffset: opts.commitOffset ?? -1,
        suspendTimeoutMillis: opts.suspendTimeoutMillis ?? 15000,
        subscription: opts.subscription ?? '*',
        subVersion: 1,
      },
      null,
      opts.channel,
    );
  }

  /** HEART_BEAT of one clustering consumer subscribed to `topic` (and its retry topic). */
  heartbeat(clientID: string, group: string, topic: string, subString = '*', channel?: FakeChannel): Promise<RemotingCommand> {
    const sub = (t: string, s: string) => ({ topic: t, subString: s, classFilterMode: false, tagsSet: [], codeSet: [], subVersion: 1 });
    const body = {
      clientID,
      consumerDataSet: [
        {
          groupName: group,
          consumeType: 'CONSUME_PASSIVELY',
          messageModel: 'CLUSTERING',
          consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
          unitMode: false,
          subscriptionDataSet: [sub(topic, subString), sub(`%RETRY%${group}`, '*')],
        },
      ],
      producerDataSet: [{ groupName: 'CLIENT_INNER_PRODUCER' }],
    };
    return this.call(RequestCode.HEART_BEAT, null, Buffer.from(JSON.stringify(body)), channel);
  }

  async close(): Promise<void> {
    await this.broker.shutdown();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
