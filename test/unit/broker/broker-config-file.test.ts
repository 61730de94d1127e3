/**
 * UPDATE_BROKER_CONFIG (25) persisted as Apache's broker does it: started with `-c broker.conf`,
 * the change goes into that file and the next start reads it (Apache's BrokerStartup points
 * BrokerPathConfigHelper at the -c file); without one, into <store>/config/broker.properties.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerHarness } from './support/broker-harness.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { setPropertiesInText } from '../../../src/common/config/properties-file.js';
import { mergeConfig, withBrokerConfigPath } from '../../../src/cli/config-sources.js';

describe('setPropertiesInText', () => {
  it('replaces the lines of updated keys (every duplicate), appends new keys, keeps comments, blank lines and order', () => {
    const text = '# my broker\nbrokerName = broker-a\n\n! old\nflushConsumerOffsetInterval: 5000\nlistenPort=10911\nbrokerName=dup\n';
    const out = setPropertiesInText(text, new Map([['brokerName', 'broker-b'], ['flushConsumerOffsetInterval', '4000'], ['autoCreateTopicEnable', 'false']]));
    assert.equal(out, '# my broker\nbrokerName=broker-b\n\n! old\nflushConsumerOffsetInterval=4000\nlistenPort=10911\nbrokerName=broker-b\nautoCreateTopicEnable=false\n');
  });

  it('keeps CRLF line ends, writes into an empty text, escapes a value with a line break or backslash', () => {
    assert.equal(setPropertiesInText('a=1\r\nb=2\r\n', new Map([['b', '3']])), 'a=1\r\nb=3\r\n');
    assert.equal(setPropertiesInText('', new Map([['a', '1']])), 'a=1\n');
    assert.equal(setPropertiesInText('a=1', new Map([['c', '2']])), 'a=1\nc=2\n');
    assert.equal(setPropertiesInText('a=1\n', new Map([['a', 'C:\\x\nbrokerPermission=2']])), 'a=C:\\\\x\\nbrokerPermission=2\n');
  });

  it('replaces every natural line of a continued entry, and only entries (a key inside a continuation is not one)', () => {
    const text = '# c\nlistenPort=10911\nnamesrvAddr=127.0.0.1:9876;\\\n    127.0.0.2:9876\nmsg=x\\\nnamesrvAddr=not-a-key\n';
    const out = setPropertiesInText(text, new Map([['namesrvAddr', '127.0.0.3:9876']]));
    assert.equal(out, '# c\nlistenPort=10911\nnamesrvAddr=127.0.0.3:9876\nmsg=x\\\nnamesrvAddr=not-a-key\n');
  });
});

describe('UPDATE_BROKER_CONFIG persistence', () => {
  let h: BrokerHarness | undefined;
  let dir = '';
  afterEach(async () => {
    await h?.close();
    h = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('started with -c broker.conf: the update is written into that file (comments kept) and the next start reads it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsmq-conf-'));
    const confFile = join(dir, 'broker.conf');
    writeFileSync(confFile, '# production broker\nbrokerName=broker-a\nflushConsumerOffsetInterval=5000\n');
    const storeDir = join(dir, 'store');
    const cfg = withBrokerConfigPath(mergeConfig({ storePathRootDir: storeDir }, confFile, {}, []), confFile);
    assert.equal(cfg.brokerConfigPath, confFile);
    h = await BrokerHarness.create({ dir: storeDir, config: cfg });
    const up = await h.call(RequestCode.UPDATE_BROKER_CONFIG, null, Buffer.from('autoCreateTopicEnable=false\nflushConsumerOffsetInterval=4000\nnoSuchKey=1\n'));
    assert.equal(up.code, ResponseCode.SUCCESS);
    assert.equal(readFileSync(confFile, 'utf8'), '# production broker\nbrokerName=broker-a\nflushConsumerOffsetInterval=4000\nautoCreateTopicEnable=false\n');
    assert.equal(existsSync(join(storeDir, 'config', 'broker.properties')), false, 'no second file');

    await h.close();
    h = undefined;

    const next = withBrokerConfigPath(mergeConfig({ storePathRootDir: storeDir }, confFile, {}, []), confFile);
    h = await BrokerHarness.create({ dir: storeDir, config: next });
    assert.equal(h.ctx.config.autoCreateTopicEnable, false, 'read back at the next start');
    const shown = (await h.call(RequestCode.GET_BROKER_CONFIG, null)).body!.toString();
    assert.match(shown, /^flushConsumerOffsetInterval=4000$/m);
  });

  it('a value with a backslash and an escaped line break round-trips through broker.conf and injects no key', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsmq-conf-'));
    const confFile = join(dir, 'broker.conf');
    writeFileSync(confFile, 'brokerName=broker-a\nmyNote=x\n');
    const storeDir = join(dir, 'store');
    h = await BrokerHarness.create({ dir: storeDir, config: withBrokerConfigPath(mergeConfig({ storePathRootDir: storeDir }, confFile, {}, []), confFile) });
    // the body as Java's Properties text: "C:\\data" is C:\data, "\n" a line break
    const up = await h.call(RequestCode.UPDATE_BROKER_CONFIG, null, Buffer.from('myNote=C:\\\\data\\nbrokerPermission=2\n'));
    assert.equal(up.code, ResponseCode.SUCCESS);
    assert.equal(readFileSync(confFile, 'utf8'), 'brokerName=broker-a\nmyNote=C:\\\\data\\nbrokerPermission=2\n');
    const reread = mergeConfig({}, confFile, {}, []);
    assert.equal(reread.myNote, 'C:\\data\nbrokerPermission=2');
    assert.equal(reread.brokerPermission, undefined);
    const shown = (await h.call(RequestCode.GET_BROKER_CONFIG, null)).body!.toString();
    assert.match(shown, /^myNote=C:\\\\data\\nbrokerPermission=2$/m, 'GET_BROKER_CONFIG escapes it too');
  });

  it('an unparsable body (malformed \\uXXXX) → SYSTEM_ERROR "string2Properties error", as Apache', async () => {
    h = await BrokerHarness.create();
    const up = await h.call(RequestCode.UPDATE_BROKER_CONFIG, null, Buffer.from('autoCreateTopicEnable=\\u12\n'));
    assert.equal(up.code, ResponseCode.SYSTEM_ERROR);
    assert.equal(up.remark, 'string2Properties error');
    assert.equal(h.ctx.config.autoCreateTopicEnable, true);
  });

  it('started without a config file: the whole configuration goes to <store>/config/broker.properties', async () => {
    h = await BrokerHarness.create();
    const up = await h.call(RequestCode.UPDATE_BROKER_CONFIG, null, Buffer.from('autoCreateTopicEnable=false\n'));
    assert.equal(up.code, ResponseCode.SUCCESS);
    const text = readFileSync(join(h.ctx.config.storePathRootDir, 'config', 'broker.properties'), 'utf8');
    assert.match(text, /^autoCreateTopicEnable=false$/m);
    assert.match(text, /^brokerName=/m, 'every key, as Apache writes them');
  });
});
