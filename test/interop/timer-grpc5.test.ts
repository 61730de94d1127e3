/**
 * rocketmq-client-java 5.0.8 (gRPC; test/interop/java/grpc5 TimerGrpcPeer) against `tsmq start`:
 * MessageBuilder.setDeliveryTimestamp timers reach a SimpleConsumer not before their time, with
 * their delivery timestamp; SendReceipt.getRecallHandle + Producer.recallMessage cancel one; a
 * bad handle is refused, an expired one gets the broker's remark (INTERNAL_SERVER_ERROR as Apache's
 * proxy); a timestamp beyond 1 day is ILLEGAL_DELIVERY_TIME. One JVM, one broker. Skips without
 * java/mvn (fails in CI).
 *
 * (The 5.0.8 client starts since the gRPC front accepts its 31536000M grpc-timeout; see
 * src/grpc/grpc-timeout-header.ts.)
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TsmqProcess } from '../support/tsmq-process.js';
import { LeanClient } from '../support/lean-client.js';
import { assertRanOk, buildPeer, javaSkipReason, runJava, type JavaRun } from './support/java-peers.js';

const N = 6;
type Line = Record<string, unknown>;

const skip = javaSkipReason();

describe('rocketmq-client-java 5.0.8 (gRPC): timer messages and recall against tsmq start', { skip, timeout: 300_000 }, () => {
  let storeDir: string;
  let broker: TsmqProcess;
  let run: JavaRun;
  const of = (type: string): Line[] => run.lines.filter((l) => l.type === type);

  before(async () => {
    const peer = await buildPeer('grpc5');
    storeDir = mkdtempSync(join(tmpdir(), 'tsmq-interop-timer-grpc5-'));
    broker = await TsmqProcess.start({ storeDir, options: { mappedFileSizeCommitLog: String(4 * 1024 * 1024), recallMessageEnable: 'true' } });
    // The Java gRPC producer needs the topic's route at start: create it with one remoting send.
    const client = new LeanClient(broker.brokerAddr);
    await client.ready;
    assert.equal((await client.send('IopTimerGrpc5', 0, Buffer.from('create'), { KEYS: 'create' })).code, 0);
    client.close();
    run = await runJava(peer, 'tsmq.interop.grpc5.TimerGrpcPeer', [broker.grpcEndpoints, 'topic=IopTimerGrpc5', 'group=GID_IOP_TIMER_GRPC5', `n=${N}`, 'delayMs=3000', 'timeoutMs=40000', 'idleMs=2500'], { timeoutMs: 120_000 });
    assertRanOk(run, 'TimerGrpcPeer');
    if (run.lines.some((l) => l.type === 'error')) console.log(run.stderr.split('\n').filter((l) => !/^\s+at /.test(l)).slice(-30).join('\n'));
  });

  after(async () => {
    await broker?.stop();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  });

  it('sends carry recall handles; recallMessage succeeds; a bad handle is refused', () => {
    assert.equal(of('sent').length, N, JSON.stringify(of('error')));
    for (const s of of('sent')) assert.match(String(s.recallHandle), /^[A-Za-z0-9_-]+=*$/);
    const last = of('sent').find((s) => s.key === `grpc-${N - 1}`)!;
    assert.equal(of('recalled')[0]?.messageId, last.messageId, JSON.stringify(of('error')));
    assert.ok(of('badRecall').length === 1, JSON.stringify(of('error')));
    // Apache's proxy: a broker refusal of a recall is INTERNAL_SERVER_ERROR with the broker's remark.
    const expired = of('expiredRecall');
    assert.equal(expired.length, 1, JSON.stringify(of('error')));
    assert.equal(expired[0]!.error, 'InternalErrorException');
    assert.match(String(expired[0]!.message), /recall failed, timestamp invalid/);
  });

  it('a delivery timestamp more than 1 day ahead is ILLEGAL_DELIVERY_TIME (Apache proxy maxDelayTimeMills)', () => {
    const far = of('farSend');
    assert.equal(far.length, 1, JSON.stringify(of('error')));
    assert.equal(far[0]!.error, 'BadRequestException');
    assert.match(String(far[0]!.message), /the max delay time of message is too large, max is 86400000/);
  });

  it('timers arrive not before their delivery timestamp, the recalled one never', () => {
    const recv = of('recv');
    assert.deepEqual(recv.map((r) => r.key as string).filter((k) => k !== 'create').sort(), Array.from({ length: N - 1 }, (_, i) => `grpc-${i}`).sort(), JSON.stringify(of('error')));
    const due = new Map(of('sent').map((s) => [s.key as string, Number(s.deliverMs)]));
    for (const r of recv.filter((x) => x.key !== 'create')) {
      assert.ok(Number(r.at) >= due.get(r.key as string)!, `${r.key as string} received ${due.get(r.key as string)! - Number(r.at)} ms early`);
      assert.equal(Number(r.deliveryTimestamp), due.get(r.key as string));
    }
  });
});
