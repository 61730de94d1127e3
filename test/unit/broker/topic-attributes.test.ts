import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { alterTopicAttributes, parseAttributeChanges, TopicAttributeError } from '../../../src/broker/topic/topic-attributes.js';
import { BrokerHarness } from './support/broker-harness.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';

describe('topic attributes (Apache TopicAttributes / AttributeUtil)', () => {
  it('parses the header form and applies create / add / update / delete with Apache\'s refusals', () => {
    assert.deepEqual(parseAttributeChanges('+message.type=FIFO,+queue.type=SimpleCQ,-reserve.time'), { '+message.type': 'FIFO', '+queue.type': 'SimpleCQ', '-reserve.time': '' });
    assert.deepEqual(parseAttributeChanges(''), {});
    assert.throws(() => parseAttributeChanges('+message.type'), /kv string format wrong\./);
    const created = alterTopicAttributes(true, {}, { '+message.type': 'FIFO', '+queue.type': 'BatchCQ' });
    assert.deepEqual(created, { 'message.type': 'FIFO', 'queue.type': 'BatchCQ' });
    assert.deepEqual(alterTopicAttributes(false, created, { '+message.type': 'MIXED', '+reserve.time': '60' }), { 'message.type': 'MIXED', 'queue.type': 'BatchCQ', 'reserve.time': '60' });
    assert.deepEqual(alterTopicAttributes(false, created, { '-message.type': '' }), { 'queue.type': 'BatchCQ' });
    const refused: Array<[boolean, Record<string, string>, Record<string, string>, string]> = [
      [true, {}, { '-message.type': '' }, 'only add attribute is supported while creating topic. key: message.type'],
      [true, {}, { '+colour': 'red' }, 'unsupported key: colour'],
      [true, {}, { '+message.type': 'SOMETIMES' }, 'value is not in set: [UNSPECIFIED, NORMAL, FIFO, DELAY, TRANSACTION, MIXED]'],
      [false, created, { '+queue.type': 'SimpleCQ' }, 'attempt to update an unchangeable attribute. key: queue.type'],
      [false, created, { '-reserve.time': '' }, 'attempt to delete a nonexistent key: reserve.time'],
      [false, {}, { '+reserve.time': '-2' }, `value is not in range(-1, ${Number.MAX_SAFE_INTEGER})`],
      [false, {}, { '+message.type': 'FIFO', '-message.type': '' }, 'alter duplication key. key: message.type'],
    ];
    for (const [create, current, changes, message] of refused) {
      assert.throws(() => alterTopicAttributes(create, current, changes), (e: unknown) => e instanceof TopicAttributeError && e.message === message, message);
    }
  });
});

describe('UPDATE_AND_CREATE_TOPIC (17) / _LIST (18) with attributes', () => {
  let h: BrokerHarness;
  afterEach(async () => {
    await h?.close();
  });

  it('stores them in topics.json form, keeps them on an update without the header, refuses bad ones with 1 and the reason', async () => {
    h = await BrokerHarness.create();
    const update = (attributes?: string) => h.call(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: 'TA', readQueueNums: 2, writeQueueNums: 2, perm: 6, ...(attributes !== undefined ? { attributes } : {}) });
    assert.equal((await update('+message.type=FIFO,+queue.type=SimpleCQ')).code, ResponseCode.SUCCESS);
    assert.deepEqual(h.ctx.topicConfigManager.selectTopicConfig('TA')!.attributes, { 'message.type': 'FIFO', 'queue.type': 'SimpleCQ' });
    assert.equal((await update()).code, ResponseCode.SUCCESS);
    assert.deepEqual(h.ctx.topicConfigManager.selectTopicConfig('TA')!.attributes, { 'message.type': 'FIFO', 'queue.type': 'SimpleCQ' }, 'kept');
    const unchangeable = await update('+queue.type=BatchCQ');
    assert.deepEqual([unchangeable.code, unchangeable.remark], [ResponseCode.SYSTEM_ERROR, 'attempt to update an unchangeable attribute. key: queue.type']);
    assert.equal((await update('-message.type')).code, ResponseCode.SUCCESS);
    assert.deepEqual(h.ctx.topicConfigManager.selectTopicConfig('TA')!.attributes, { 'queue.type': 'SimpleCQ' });
    const all = JSON.parse((await h.call(RequestCode.GET_ALL_TOPIC_CONFIG, null)).body!.toString()).topicConfigTable;
    assert.deepEqual(all.TA.attributes, { 'queue.type': 'SimpleCQ' });
    const list = { topicConfigList: [{ topicName: 'TB', readQueueNums: 1, writeQueueNums: 1, attributes: { '+message.type': 'DELAY' } }, { topicName: 'TC', attributes: { '+nope': '1' } }] };
    const refused = await h.call(RequestCode.UPDATE_AND_CREATE_TOPIC_LIST, null, Buffer.from(JSON.stringify(list)));
    assert.deepEqual([refused.code, refused.remark], [ResponseCode.SYSTEM_ERROR, 'topic TC: unsupported key: nope']);
    assert.equal(h.ctx.topicConfigManager.selectTopicConfig('TB'), undefined);
    list.topicConfigList.pop();
    assert.equal((await h.call(RequestCode.UPDATE_AND_CREATE_TOPIC_LIST, null, Buffer.from(JSON.stringify(list)))).code, ResponseCode.SUCCESS);
    assert.deepEqual(h.ctx.topicConfigManager.selectTopicConfig('TB')!.attributes, { 'message.type': 'DELAY' });
  });
});
