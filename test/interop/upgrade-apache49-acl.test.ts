/**
 * A RocketMQ 4.9 installation with ACL 1.0 upgraded to tsmq, as docs/migration.md ("From Apache
 * RocketMQ 4.9 with ACL 1.0") and docs/security.md ("From ACL 1.0") say, judged by Apache's own
 * programs: Apache 4.9.7 NamesrvStartup + BrokerStartup (the last 4.9 server jars on Maven
 * Central) with `aclEnable=true` and a plain_acl.yml, Apache 4.9.8's client with AclClientRPCHook.
 *
 *   1. On Apache 4.9.7: the normal account sends K keyed messages and D with delay level 4 (30 s),
 *      its push consumer consumes the K, answering one RECONSUME_LATER with delay level 4 (a retry
 *      in flight), shuts down (offsets committed); U more are sent and left unconsumed.
 *   2. Apache stopped (SIGTERM); the same broker.conf gets the four lines of docs/security.md and
 *      `tsmq broker -c` starts on the same store, the Apache nameserver keeps running.
 *   3. The same consumer (same group, same credentials) gets exactly the U, the D (not before
 *      born + 30 s) and the retried message with reconsumeTimes 1 (both with DELAY 4 kept, as Apache
 *      stores them), nothing consumed on Apache
 *      again; the same producer credentials still send; the account whose whiteRemoteAddress let a
 *      wrong secret through on Apache is refused now (check signature failed.) and tsmq's log says why.
 * About 50 s on 2 loaded cores (two JVM servers, three client JVMs, the 30 s delay; 70 s when the
 * 4.9.8 peer is compiled first).
 * Skips when `java` or `mvn` is missing.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APACHE_4_VERSION, freePortTriple, startApacheBroker, startApacheNamesrv, startTsmqBroker, waitRegistered, type ServerProc } from './support/apache-server.js';
import { assertRanOk, buildPeer, javaSkipReason, runJava, type BuiltPeer, type JavaRun } from './support/java-peers.js';

type Line = Record<string, unknown>;
const of = (run: JavaRun, type: string): Line[] => run.lines.filter((l) => l.type === type);
const CLUSTER = 'Up49Cluster';
const TOPIC = 'OrderTopic';
const GROUP = 'GOrder';
const K = 8;
const D = 2;
const U = 4;
const RETRY_KEY = 'k3';
const DELAY_LEVEL = 4; // 30 s in Apache's default messageDelayLevel
const DELAY_MS = 30_000;

const PLAIN_ACL = `globalWhiteRemoteAddresses:
  - 10.10.103.*
accounts:
  - accessKey: RocketMQ
    secretKey: 12345678
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - ${TOPIC}=PUB|SUB
    groupPerms:
      - ${GROUP}=SUB
  - accessKey: whiteapp
    secretKey: white-secret
    whiteRemoteAddress: 127.0.0.1
    defaultTopicPerm: PUB|SUB
  - accessKey: rocketmq2
    secretKey: 12345678
    admin: true
`;

describe(`Apache ${APACHE_4_VERSION} broker with ACL 1.0 → tsmq on the same store and broker.conf, 4.9.8 clients with the same credentials`, { skip: javaSkipReason(), timeout: 300_000 }, () => {
  let home: string;
  let store: string;
  let conf: string;
  let nsAddr: string;
  let brokerAddr: string;
  let ns: ServerProc | null = null;
  let broker: ServerProc | null = null;
  let peer: BuiltPeer;
  let sentOnApache: Line[] = [];
  let recvOnApache: Line[] = [];
  let onTsmq: JavaRun;
  let probes: JavaRun;

  const client = async (args: string[], timeoutMs = 120_000): Promise<JavaRun> => {
    const run = await runJava(peer, 'tsmq.interop.Upgrade49Peer', [nsAddr, ...args], { timeoutMs });
    assertRanOk(run, 'Upgrade49Peer');
    assert.deepEqual(of(run, 'error'), [], run.stdout.slice(-3000) + run.stderr.slice(-3000));
    return run;
  };

  before(async () => {
    peer = await buildPeer('rocketmq4');
    home = mkdtempSync(join(tmpdir(), 'tsmq-up49-'));
    mkdirSync(join(home, 'conf'), { recursive: true });
    writeFileSync(join(home, 'conf', 'plain_acl.yml'), PLAIN_ACL);
    const nsPort = await freePortTriple();
    const brokerPort = await freePortTriple();
    nsAddr = `127.0.0.1:${nsPort}`;
    brokerAddr = `127.0.0.1:${brokerPort}`;
    store = join(home, 'store');
    conf = join(home, 'conf', 'broker.conf');
    writeFileSync(conf, [
      `brokerClusterName=${CLUSTER}`, 'brokerName=broker-up49', 'brokerId=0', `namesrvAddr=${nsAddr}`, `listenPort=${brokerPort}`,
      'brokerIP1=127.0.0.1', `storePathRootDir=${store}`, `storePathCommitLog=${join(store, 'commitlog')}`, 'brokerRole=ASYNC_MASTER',
      'flushDiskType=ASYNC_FLUSH', 'autoCreateTopicEnable=true', 'aclEnable=true', '',
    ].join('\n'));
    ns = await startApacheNamesrv(home, nsPort, APACHE_4_VERSION);
  });

  after(async () => {
    await broker?.kill();
    await ns?.kill();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it(`on Apache ${APACHE_4_VERSION} (aclEnable=true): the normal account sends, consumes (one RECONSUME_LATER), delayed and unconsumed messages are left`, async () => {
    broker = await startApacheBroker(home, conf, APACHE_4_VERSION);
    await waitRegistered(nsAddr, CLUSTER, brokerAddr);
    const run = await client([
      'send', 'RocketMQ', '12345678', TOPIC, 'k', String(K), '0',
      '--', 'send', 'RocketMQ', '12345678', TOPIC, 'd', String(D), String(DELAY_LEVEL),
      '--', 'consume', 'RocketMQ', '12345678', GROUP, TOPIC, RETRY_KEY, String(DELAY_LEVEL), String(K), '60000',
      '--', 'send', 'RocketMQ', '12345678', TOPIC, 'u', String(U), '0',
      '--', 'send', 'whiteapp', 'not-the-secret', TOPIC, 'w', '1', '0',
    ]);
    sentOnApache = of(run, 'sent');
    recvOnApache = of(run, 'recv');
    assert.deepEqual(of(run, 'refused'), [], 'ACL 1.0 let every one of these through');
    assert.deepEqual(sentOnApache.map((l) => `${String(l.key)}:${String(l.status)}`).sort(), [
      ...Array.from({ length: K }, (_, i) => `k${i}`), ...Array.from({ length: D }, (_, i) => `d${i}`), ...Array.from({ length: U }, (_, i) => `u${i}`), 'w0',
    ].map((k) => `${k}:SEND_OK`).sort(), 'whiteapp with a wrong secret is let in by its whiteRemoteAddress under ACL 1.0');
    assert.deepEqual(new Set(recvOnApache.map((l) => String(l.key))), new Set(Array.from({ length: K }, (_, i) => `k${i}`)));
    assert.equal(recvOnApache.filter((l) => Number(l.reconsumeTimes) > 0).length, 0, 'the retry is still pending');
    assert.deepEqual(recvOnApache.map((l) => String(l.delay)), Array(K).fill('null'));
  });

  it('tsmq broker -c on the same store and broker.conf (+ the migration keys): same clients, same credentials; every message, offset, delay and retry is there', async () => {
    await broker!.stop();
    assert.ok(!existsSync(join(store, 'abort')), 'Apache 4.9 stopped cleanly');
    // docs/security.md "From ACL 1.0": the keys a 4.9 broker.conf gets
    appendFileSync(conf, ['migrateAuthFromV1Enabled=true', `rocketmqHome=${home}`, 'authenticationEnabled=true', 'authorizationEnabled=true', ''].join('\n'));
    broker = await startTsmqBroker(conf);
    await waitRegistered(nsAddr, CLUSTER, brokerAddr);
    onTsmq = await client(['consume', 'RocketMQ', '12345678', GROUP, TOPIC, '-', '0', String(U + 1 + D + 1), String(DELAY_MS + 40_000)], DELAY_MS + 90_000);
    probes = await client([
      'send', 'RocketMQ', '12345678', TOPIC, 'after', '2', '0',
      '--', 'send', 'whiteapp', 'not-the-secret', TOPIC, 'wt', '1', '0',
      '--', 'send', '-', '-', TOPIC, 'unsigned', '1', '0',
    ]);
    const got = of(onTsmq, 'recv');
    const keys = got.map((l) => `${String(l.key)}#${String(l.reconsumeTimes)}`).sort();
    const want = [...Array.from({ length: U }, (_, i) => `u${i}#0`), 'w0#0', ...Array.from({ length: D }, (_, i) => `d${i}#0`), `${RETRY_KEY}#1`].sort();
    assert.deepEqual(keys, want, `delivered on tsmq: ${JSON.stringify(got)}`);
    // Apache stores a due delayed message with its properties as they were, DELAY included (seen
    // with Apache 4.9.7 delivering tsmq's delayed messages, by hand): tsmq's delivery does the same
    assert.deepEqual(got.filter((l) => String(l.key).startsWith('d') || l.key === RETRY_KEY).map((l) => `${String(l.key)}:${String(l.delay)}`).sort(), [...Array.from({ length: D }, (_, i) => `d${i}:${DELAY_LEVEL}`), `${RETRY_KEY}:${DELAY_LEVEL}`].sort());
    assert.deepEqual(got.filter((l) => String(l.key).startsWith('u')).map((l) => String(l.delay)), Array(U).fill('null'));
    for (const l of got.filter((x) => String(x.key).startsWith('d'))) assert.ok(Number(l.nowMs) - Number(l.bornMs) >= DELAY_MS - 1000, `${String(l.key)} delivered ${Number(l.nowMs) - Number(l.bornMs)} ms after its birth (delay level ${DELAY_LEVEL} = ${DELAY_MS} ms)`);
  });

  it('same credentials: the producer still sends; a wrong secret from the account\'s whiteRemoteAddress (let in by ACL 1.0) and an unsigned client are refused, with Apache\'s remarks, and the log says why', () => {
    assert.deepEqual(of(probes, 'sent').map((l) => `${String(l.key)}:${String(l.status)}`), ['after0:SEND_OK', 'after1:SEND_OK']);
    const refused = of(probes, 'refused');
    assert.deepEqual(refused.map((l) => `${String(l.key)}:${String(l.code)}`), ['wt0:16', 'unsigned0:16'], JSON.stringify(refused));
    assert.match(String(refused[0]!.message), /check signature failed\./);
    assert.match(String(refused[1]!.message), /username cannot be null\./);
    assert.match(broker!.out, /plain_acl\.yml gave account \\?"whiteapp\\?" whiteRemoteAddress \\?"127\.0\.0\.1\\?", which let 127\.0\.0\.1 in without checking its signature/, broker!.out.slice(-3000));
    const users = JSON.parse(readFileSync(join(store, 'config', 'users.json'), 'utf8')) as { users: Array<{ username: string; userType: string }> };
    assert.deepEqual(users.users.map((u) => `${u.username}:${u.userType}`).sort(), ['RocketMQ:Normal', 'rocketmq2:Super', 'whiteapp:Normal']);
  });
});
