/**
 * The timer put hook and recall handles as pure functions (Apache HookUtils.transformTimerMessage,
 * MessageStoreConfig.setTimerPrecisionMs, RecallMessageHandle.HandleV1).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../src/common/time/clock.js';
import type { MessageInner } from '../../../src/common/message/message.js';
import { TimerPutHook, parseJavaLong } from '../../../src/broker/timer/timer-put-hook.js';
import { snapTimerPrecisionMs } from '../../../src/broker/timer/timer-config.js';
import { buildRecallHandle, decodeRecallHandle, recallHandleOf } from '../../../src/broker/timer/recall-handle.js';

const NOW = 1_700_000_000_000;
const host = { ip: Buffer.from([127, 0, 0, 1]), port: 1 };
const msg = (props: Record<string, string>, sysFlag = 0): MessageInner => ({
  topic: 'T', queueId: 3, flag: 0, body: Buffer.from('b'), properties: new Map(Object.entries(props)), sysFlag, bornTimestamp: NOW, bornHost: host, storeHost: host, reconsumeTimes: 0, preparedTransactionOffset: 0,
});

function hook(opts: { precision?: number; congest?: number; slotNum?: number; random?: number; enabled?: boolean } = {}): TimerPutHook {
  return new TimerPutHook({
    config: { timerWheelEnable: opts.enabled ?? true, timerMaxDelaySec: 259200, timerPrecisionMs: opts.precision ?? 1000, timerCongestNumEachSlot: opts.congest ?? 2147483647 },
    clock: new ManualClock(NOW),
    congestNumOf: () => opts.slotNum ?? 0,
    random: () => opts.random ?? 0.5,
  });
}

describe('timer put hook', () => {
  it('rounds the deliver time down to the precision, one precision less for an exact multiple', () => {
    const a = msg({ TIMER_DELIVER_MS: String(NOW + 5500) });
    assert.equal(hook().apply(a), null);
    assert.equal(a.properties.get('TIMER_OUT_MS'), String(NOW + 5000));
    assert.equal(a.topic, 'rmq_sys_wheel_timer');
    assert.equal(a.queueId, 0);
    assert.equal(a.properties.get('REAL_TOPIC'), 'T');
    assert.equal(a.properties.get('REAL_QID'), '3');
    const b = msg({ TIMER_DELIVER_MS: String(NOW + 6000) });
    hook().apply(b);
    assert.equal(b.properties.get('TIMER_OUT_MS'), String(NOW + 5000));
    const c = msg({ TIMER_DELIVER_MS: String(NOW + 650) });
    hook({ precision: 200 }).apply(c);
    assert.equal(c.properties.get('TIMER_OUT_MS'), String(NOW + 600));
  });

  it('reads TIMER_DELAY_SEC before TIMER_DELAY_MS before TIMER_DELIVER_MS, with Java Long.parseLong rules', () => {
    const a = msg({ TIMER_DELAY_SEC: '+3', TIMER_DELAY_MS: '10000', TIMER_DELIVER_MS: String(NOW + 20_000) });
    hook().apply(a);
    assert.equal(a.properties.get('TIMER_OUT_MS'), String(NOW + 2000));
    const b = msg({ TIMER_DELAY_MS: '1500', TIMER_DELIVER_MS: String(NOW + 20_000) });
    hook().apply(b);
    assert.equal(b.properties.get('TIMER_OUT_MS'), String(NOW + 1000));
    assert.equal(parseJavaLong(' 5'), null);
    assert.equal(parseJavaLong('5.0'), null);
    assert.equal(parseJavaLong('-7'), -7);
    for (const bad of [{ TIMER_DELAY_SEC: ' 3' }, { TIMER_DELAY_MS: '1e3' }, { TIMER_DELIVER_MS: '' }] as Record<string, string>[]) {
      assert.equal(hook().apply(msg(bad))?.status, 'WHEEL_TIMER_MSG_ILLEGAL', JSON.stringify(bad));
    }
  });

  it('refuses a delay over timerMaxDelaySec, accepts exactly the max; a past time is stored as is', () => {
    assert.equal(hook().apply(msg({ TIMER_DELAY_MS: String(259200 * 1000 + 1) }))?.status, 'WHEEL_TIMER_MSG_ILLEGAL');
    assert.equal(hook().apply(msg({ TIMER_DELAY_MS: String(259200 * 1000) })), null);
    const past = msg({ TIMER_DELIVER_MS: String(NOW - 1) });
    assert.equal(hook().apply(past), null);
    assert.equal(past.topic, 'T');
    assert.equal(past.properties.has('TIMER_OUT_MS'), false);
    assert.equal(hook().apply(msg({ TIMER_DELIVER_MS: String(NOW - 1), TIMER_DEL_UNIQKEY: 'T+X' }))?.status, 'WHEEL_TIMER_MSG_ILLEGAL');
  });

  it('a delay level wins and removes the timer properties; prepared halves and rolled/dequeued messages are left alone', () => {
    const d = msg({ DELAY: '2', TIMER_DELAY_SEC: '5', TIMER_DELIVER_MS: '1', TIMER_DELAY_MS: '1' });
    assert.equal(hook().apply(d), null);
    assert.deepEqual([...d.properties.keys()], ['DELAY']);
    const half = msg({ TIMER_DELAY_SEC: '5' }, 0x4);
    hook().apply(half);
    assert.equal(half.topic, 'T');
    const out = msg({ TIMER_DELAY_SEC: '5', TIMER_OUT_MS: '123' });
    hook().apply(out);
    assert.equal(out.topic, 'T');
  });

  it('flow control per slot (Apache isReject) and timerWheelEnable=false', () => {
    assert.equal(hook({ congest: 10, slotNum: 10 }).apply(msg({ TIMER_DELAY_SEC: '5' })), null);
    assert.equal(hook({ congest: 10, slotNum: 20 }).apply(msg({ TIMER_DELAY_SEC: '5' }))?.status, 'WHEEL_TIMER_FLOW_CONTROL');
    assert.equal(hook({ congest: 10, slotNum: 15, random: 0.9 }).apply(msg({ TIMER_DELAY_SEC: '5' }))?.status, 'WHEEL_TIMER_FLOW_CONTROL');
    assert.equal(hook({ congest: 10, slotNum: 15, random: 0.1 }).apply(msg({ TIMER_DELAY_SEC: '5' })), null);
    const r = hook({ enabled: false }).apply(msg({ TIMER_DELAY_SEC: '5' }));
    assert.equal(r?.status, 'WHEEL_TIMER_NOT_ENABLE');
    assert.equal(r?.remark, 'accurate timer message is not enabled, timerWheelEnable is false');
  });

  it('snaps timerPrecisionMs like Apache (100, 200, 500, 1000)', () => {
    assert.deepEqual([1, 100, 199, 200, 499, 500, 999, 1000, 5000].map(snapTimerPrecisionMs), [100, 100, 100, 200, 200, 500, 500, 1000, 1000]);
  });

  it('recall handles: Java Base64 URL encoding with padding, v1 and five fields', () => {
    assert.equal(buildRecallHandle('TopicA', 'broker-a', '1700000001001', '7F0000010001'), 'djEgVG9waWNBIGJyb2tlci1hIDE3MDAwMDAwMDEwMDEgN0YwMDAwMDEwMDAx');
    assert.equal(buildRecallHandle('T', 'b', '1', 'X'), 'djEgVCBiIDEgWA==');
    assert.deepEqual(decodeRecallHandle('djEgVCBiIDEgWA=='), { topic: 'T', brokerName: 'b', timestampStr: '1', messageId: 'X' });
    assert.equal(decodeRecallHandle('djEgVCBiIDE='), null, 'four fields');
    assert.equal(decodeRecallHandle('not base64!'), null);
    assert.equal(decodeRecallHandle(''), null);
    const stored = msg({ TIMER_OUT_MS: String(NOW + 5000), REAL_TOPIC: 'T', UNIQ_KEY: 'U1' });
    assert.deepEqual(decodeRecallHandle(recallHandleOf(stored, 'bk')), { topic: 'T', brokerName: 'bk', timestampStr: String(NOW + 5001), messageId: 'U1' });
    assert.equal(recallHandleOf(msg({ TIMER_OUT_MS: '1', REAL_TOPIC: '%RETRY%G' }), 'bk'), undefined);
  });
});
