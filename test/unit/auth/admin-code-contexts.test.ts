/**
 * ACL 2.0 classification of the admin request codes that mqadmin, the Dashboard, timers and
 * controller mode added after the first ACL table: each resolves to the resource and actions a
 * user must hold (remoting-auth-contexts.ts), not to the Cluster Update fallback for unknown codes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { brokerAuthContexts } from '../../../src/broker/auth/remoting-auth-contexts.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';

const contexts = brokerAuthContexts('DefaultCluster');
const of = (code: number, ext: Record<string, string>, body?: string, handled = true): string[] => {
  const req = createRequestCommand(code, ext);
  if (body !== undefined) req.body = Buffer.from(body);
  return contexts(req, handled).map((c) => `${c.resource.type}:${c.resource.name}:${c.actions.join('+')}`);
};

describe('ACL contexts of admin codes', () => {
  it('maps each admin code to its resource and actions', () => {
    assert.deepEqual(of(RequestCode.GET_BROKER_RUNTIME_INFO, {}), ['Cluster:DefaultCluster:Get']);
    assert.deepEqual(of(RequestCode.UPDATE_BROKER_CONFIG, {}), ['Cluster:DefaultCluster:Update']);
    assert.deepEqual(of(RequestCode.GET_BROKER_CONFIG, {}), ['Cluster:DefaultCluster:Get']);
    assert.deepEqual(of(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, '{"groupName":"GID_A","consumeEnable":true}'), ['Group:GID_A:Update']);
    assert.deepEqual(of(RequestCode.DELETE_SUBSCRIPTIONGROUP, { groupName: 'GID_A' }), ['Group:GID_A:Delete']);
    assert.deepEqual(of(RequestCode.GET_CONSUMER_CONNECTION_LIST, { consumerGroup: 'GID_A' }), ['Group:GID_A:Get']);
    assert.deepEqual(of(RequestCode.GET_PRODUCER_CONNECTION_LIST, { producerGroup: 'PID_A' }), ['Group:PID_A:Get']);
    assert.deepEqual(of(RequestCode.GET_ALL_PRODUCER_INFO, {}), ['Cluster:DefaultCluster:Get']);
    assert.deepEqual(of(RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, { topic: 'T1' }), ['Topic:T1:Get']);
    assert.deepEqual(of(RequestCode.CLONE_GROUP_OFFSET, { srcGroup: 'G1', destGroup: 'G2', topic: 'T1' }), ['Group:G1:Update', 'Group:G2:Update', 'Topic:T1:Update']);
    assert.deepEqual(of(RequestCode.GET_TOPIC_CONFIG, { topic: 'T1' }), ['Topic:T1:Get']);
    assert.deepEqual(of(RequestCode.RECALL_MESSAGE, { topic: 'T1', recallHandle: 'x' }), ['Topic:T1:Pub']);
    assert.deepEqual(of(RequestCode.CONTROLLER_ELECT_MASTER, {}), ['Cluster:DefaultCluster:Update']);
    assert.deepEqual(of(RequestCode.CONTROLLER_GET_SYNC_STATE_DATA, {}), ['Cluster:DefaultCluster:Get']);
  });

  it('an unlisted code: Cluster Update when the broker serves it, nothing when it does not (Apache: no annotated header)', () => {
    assert.deepEqual(of(9999, {}), ['Cluster:DefaultCluster:Update']);
    assert.deepEqual(of(9999, {}, undefined, false), []);
    assert.deepEqual(of(50, {}, undefined, false), []);
    // a listed code keeps its rule even without a handler
    assert.deepEqual(of(RequestCode.GET_TOPIC_CONFIG, { topic: 'T1' }, undefined, false), ['Topic:T1:Get']);
  });

  it('an undecodable subscription group body is refused as a parse error', () => {
    assert.throws(() => of(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, 'not json'), /parse authorization context error/);
  });
});
