/**
 * Label values of the metrics as Apache 5.3.3 prints them: rpc codes by their lower-case
 * RocketMQ names (RemotingHelper.getRequestCodeDesc / getResponseCodeDesc, a code without a name
 * as its number), and the lag series' topic / is_retry (ConsumerLagCalculator: a push group's
 * %RETRY% topic is no series, a pop retry topic is the real topic with is_retry true).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { lagLabels, requestCodeLabel, responseCodeLabel } from '../../../src/metrics/broker-metrics.js';

describe('rpc code labels', () => {
  it('names as the lower-case RocketMQ constants; unknown codes as numbers', () => {
    assert.equal(requestCodeLabel(310), 'send_message_v2');
    assert.equal(requestCodeLabel(11), 'pull_message');
    assert.equal(requestCodeLabel(34), 'heart_beat');
    assert.equal(requestCodeLabel(200050), 'pop_message');
    assert.equal(requestCodeLabel(987654), '987654');
    assert.equal(responseCodeLabel(0), 'success');
    assert.equal(responseCodeLabel(1), 'system_error');
    assert.equal(responseCodeLabel(19), 'pull_not_found');
    assert.equal(responseCodeLabel(17), 'topic_not_exist');
    assert.equal(responseCodeLabel(-77), '-77');
  });
});

describe('lag series labels', () => {
  it('plain topics as themselves, not retry', () => {
    assert.deepEqual(lagLabels('OrderTopic', 'GID_A'), { topic: 'OrderTopic', isRetry: false });
    assert.deepEqual(lagLabels('%DLQ%GID_A', 'GID_A'), { topic: '%DLQ%GID_A', isRetry: false });
  });

  it("a push group's own retry topic (and another group's) is no series", () => {
    assert.equal(lagLabels('%RETRY%GID_A', 'GID_A'), null);
    assert.equal(lagLabels('%RETRY%GID_B', 'GID_A'), null);
    assert.equal(lagLabels('%RETRY%GID_B+OrderTopic', 'GID_A'), null);
  });

  it('a pop retry topic of the group (V2 "+", V1 "_") is its real topic with is_retry', () => {
    assert.deepEqual(lagLabels('%RETRY%GID_A+OrderTopic', 'GID_A'), { topic: 'OrderTopic', isRetry: true });
    assert.deepEqual(lagLabels('%RETRY%GID_A_OrderTopic', 'GID_A'), { topic: 'OrderTopic', isRetry: true });
    assert.equal(lagLabels('%RETRY%GID_A+', 'GID_A'), null, 'no topic after the separator');
  });
});
