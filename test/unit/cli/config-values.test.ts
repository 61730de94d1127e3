/**
 * Config values as an Apache broker.conf writes them: booleans in any case (Java's
 * Boolean.parseBoolean), other words refused with the clear error; a fractional port is told it
 * must be a whole number.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, parsePortValue, wholeNumberIn } from '../../../src/common/config/config-spec.js';
import { resolveBrokerConfig } from '../../../src/broker/broker-config.js';
import { resolveGrpcConfig } from '../../../src/grpc/grpc-config.js';

const message = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof ConfigError, String(e));
    return e.message;
  }
  return 'no error';
};

test('booleans: true/false in any case, surrounding spaces ignored', () => {
  for (const [text, value] of [['TRUE', true], ['True', true], ['tRuE', true], [' true ', true], ['FALSE', false], ['False', false], ['false', false]] as const) {
    assert.equal(resolveBrokerConfig({ autoCreateTopicEnable: text }).autoCreateTopicEnable, value, text);
    assert.equal(resolveBrokerConfig({ enablePropertyFilter: text }).enablePropertyFilter, value, text);
  }
});

test('booleans: any other word is refused (Apache would read it as false)', () => {
  assert.equal(message(() => resolveBrokerConfig({ autoCreateTopicEnable: 'yes' })), 'invalid config autoCreateTopicEnable=yes: expected true or false');
  assert.equal(message(() => resolveBrokerConfig({ autoCreateTopicEnable: '1' })), 'invalid config autoCreateTopicEnable=1: expected true or false');
  assert.equal(message(() => resolveBrokerConfig({ autoCreateTopicEnable: 'ture' })), 'invalid config autoCreateTopicEnable=ture: expected true or false');
  assert.equal(message(() => resolveBrokerConfig({ autoCreateTopicEnable: '' })), 'invalid config autoCreateTopicEnable=: expected true or false');
});

test('a value with an end-of-line "# comment" (not a comment in a .properties file, for Java nor tsmq) says so', () => {
  // docs/security.md once showed `aclEnable=true      # may stay; ...`: pasted as is, the value is the whole rest of the line
  const raw = 'true                      # may stay; ignored';
  assert.equal(message(() => resolveBrokerConfig({ autoCreateTopicEnable: raw })), `invalid config autoCreateTopicEnable=${raw}: expected true or false (a .properties value runs to the end of its line: put a # comment on a line of its own)`);
  assert.equal(message(() => resolveBrokerConfig({ listenPort: '10911 # remoting' })), 'invalid config listenPort=10911 # remoting: not a number (a .properties value runs to the end of its line: put a # comment on a line of its own)');
  assert.equal(message(() => resolveBrokerConfig({ autoCreateTopicEnable: 'yes' })), 'invalid config autoCreateTopicEnable=yes: expected true or false', 'no hint without a #');
});

test('ports: a fraction must be a whole number; out of range names the range', () => {
  assert.equal(message(() => resolveBrokerConfig({ listenPort: '10921.5' })), 'invalid config listenPort=10921.5: must be a whole number (a port in 0..65535)');
  assert.equal(message(() => resolveBrokerConfig({ listenPort: '70000' })), 'invalid config listenPort=70000: must be a port in 0..65535');
  assert.equal(message(() => resolveBrokerConfig({ listenPort: 'abc' })), 'invalid config listenPort=abc: not a number');
  assert.equal(resolveBrokerConfig({ listenPort: '10921' }).listenPort, 10921);
  assert.equal(message(() => resolveBrokerConfig({ haListenPort: '10912.5' })), 'invalid config haListenPort=10912.5: must be a whole number (a port in 0..65535, or -1 for listenPort + 1)');
  assert.equal(resolveBrokerConfig({ haListenPort: '-1' }).haListenPort, -1);
  assert.equal(message(() => resolveBrokerConfig({ brokerPermission: '6.5' })), 'invalid config brokerPermission=6.5: must be a whole number (in 0..7)');
  assert.equal(message(() => resolveBrokerConfig({ brokerPermission: '8' })), 'invalid config brokerPermission=8: must be in 0..7');
  assert.equal(message(() => resolveGrpcConfig({ grpcListenPort: '8081.5' })), 'invalid config grpcListenPort=8081.5: must be a whole number (a port in 0..65535, or -1 to switch the gRPC front off)');
  assert.equal(resolveGrpcConfig({ grpcListenPort: '-1' }).grpcListenPort, -1);
  // the nameserver's listenPort and `tsmq start -n`
  assert.equal(message(() => parsePortValue('listenPort', '9876.5')), 'invalid config listenPort=9876.5: must be a whole number (a port in 0..65535)');
  assert.equal(message(() => parsePortValue('listenPort', 'x')), 'invalid config listenPort=x: not a number');
  assert.equal(message(() => parsePortValue('listenPort', '65536')), 'invalid config listenPort=65536: must be a port in 0..65535');
  assert.equal(parsePortValue('listenPort', ' 9876 '), 9876);
  assert.equal(wholeNumberIn(1, 3, 'in 1..3')(2), null);
});

test('registration timing defaults are Apache 5.3.3 ones: registerBrokerTimeoutMills 24000 (4.9: 6000), registerNameServerPeriod 30000; namesrv expires a silent broker after 120000', async () => {
  const c = resolveBrokerConfig({});
  assert.equal(c.registerBrokerTimeoutMills, 24000);
  assert.equal(c.registerNameServerPeriod, 30000);
  const { DEFAULT_BROKER_EXPIRED_MS } = await import('../../../src/namesrv/route/route-info-manager.js');
  assert.equal(DEFAULT_BROKER_EXPIRED_MS, 120_000);
});
