import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  dlqTopicOf,
  isDlqTopic,
  isNotAllowedSendTopic,
  isRetryTopic,
  isSysConsumerGroup,
  isSystemTopic,
  notAllowedSendTopicNames,
  retryTopicOf,
  systemTopicNames,
  TopicValidator,
  validateGroup,
  validateTopic,
} from '../../../src/common/message/topic-validator.js';

const chars = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-';
const topicOf = (n: number): string => Array.from({ length: n }, (_, i) => chars[i % chars.length]).join('');

test('B22 topic of 127 characters is accepted', () => {
  assert.equal(validateTopic(topicOf(127)), null);
});

test('B22 topics of 128 and 255 characters are rejected as too long', () => {
  for (const n of [128, 255]) {
    const reason = validateTopic(topicOf(n));
    assert.ok(reason !== null);
    assert.match(reason, /too long/);
    assert.match(reason, new RegExp(`${n} characters, the limit is 127`));
  }
});

test('B22 illegal characters are rejected', () => {
  assert.match(validateTopic('a.b') ?? '', /contains characters other than \[%\|a-zA-Z0-9_-\]/);
  assert.match(validateTopic('has space') ?? '', /contains characters other than/);
  assert.match(validateTopic('tópico') ?? '', /contains characters other than/);
  assert.equal(validateTopic('a%b|c_d-E9'), null);
});

test('B22 %RETRY% topics may be up to 255 characters', () => {
  const retry = (n: number): string => '%RETRY%' + topicOf(n - 7);
  assert.equal(validateTopic(retry(128)), null);
  assert.equal(validateTopic(retry(255)), null);
  assert.match(validateTopic(retry(256)) ?? '', /too long: 256 characters, the limit is 255/);
});

test('empty and blank topics are rejected', () => {
  assert.match(validateTopic('') ?? '', /empty or blank/);
  assert.match(validateTopic('   ') ?? '', /empty or blank/);
});

test('retry/DLQ naming and system topics', () => {
  assert.equal(retryTopicOf('g1'), '%RETRY%g1');
  assert.equal(dlqTopicOf('g1'), '%DLQ%g1');
  assert.ok(isRetryTopic('%RETRY%g1'));
  assert.ok(!isRetryTopic('g1'));
  assert.ok(isDlqTopic('%DLQ%g1'));
  assert.ok(isSystemTopic(TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC));
  assert.ok(isSystemTopic('SCHEDULE_TOPIC_XXXX'));
  assert.ok(isSystemTopic('RMQ_SYS_TRANS_HALF_TOPIC'));
  assert.ok(isSystemTopic('rmq_sys_wheel_timer'));
  assert.ok(!isSystemTopic('FooBar'));
  assert.ok(isNotAllowedSendTopic('SCHEDULE_TOPIC_XXXX'));
  assert.ok(!isNotAllowedSendTopic('TBW102'));
  assert.equal(TopicValidator.TOPIC_MAX_LENGTH, 127);
});

test('system topic lists: the not-allowed-send topics are system topics; CHECKPOINT_TOPIC is one (Apache 5.x)', () => {
  assert.deepEqual([...notAllowedSendTopicNames()].sort(), [
    'OFFSET_MOVED_EVENT',
    'RMQ_SYS_TRANS_HALF_TOPIC',
    'RMQ_SYS_TRANS_OP_HALF_TOPIC',
    'SCHEDULE_TOPIC_XXXX',
    'SELF_TEST_TOPIC',
    'TRANS_CHECK_MAX_TIME_TOPIC',
  ]);
  for (const t of notAllowedSendTopicNames()) assert.ok(systemTopicNames().includes(t), t);
  for (const t of systemTopicNames()) assert.ok(isSystemTopic(t), t);
  assert.ok(isSystemTopic('CHECKPOINT_TOPIC'));
  assert.ok(!isNotAllowedSendTopic('CHECKPOINT_TOPIC'));
  assert.ok(!isSystemTopic('%RETRY%g1'));
});

test('group names: blank, illegal characters, more than 120 characters are refused; CID_RMQ_SYS_ groups are system groups', () => {
  assert.equal(validateGroup('GID_demo-1%x|y'), null);
  assert.equal(validateGroup(topicOf(120)), null);
  assert.equal(validateGroup(topicOf(121)), `group "${topicOf(37)}..." is too long: 121 characters, the limit is 120`);
  assert.equal(validateGroup(''), 'group is empty or blank');
  assert.equal(validateGroup('  '), 'group is empty or blank');
  assert.equal(validateGroup('g.1'), 'group "g.1" contains characters other than [%|a-zA-Z0-9_-]');
  assert.equal(validateGroup('grüppe'), 'group "grüppe" contains characters other than [%|a-zA-Z0-9_-]');
  assert.ok(isSysConsumerGroup('CID_RMQ_SYS_TRANS'));
  assert.ok(!isSysConsumerGroup('CID_DEMO'));
});
