// Automatic failover on one machine (docs/failover.md): etcd, a tsmq nameserver and three
// controller-mode replicas of broker group "demo" (free ports, a temp dir), an ali-ons producer
// sending continuously and an ali-ons push consumer. After --kill-after-ms the master is
// SIGKILLed; the script prints the new master, its epoch, the failover time (kill → first
// acknowledged send), restarts the killed replica (it rejoins as a slave), stops producing after
// --produce-after-kill-ms and checks that every acknowledged message was consumed.
//
// Usage (from the repository root; needs `etcd` on PATH or ETCD_BIN):
//   node --import tsx examples/failover/failover-demo.mjs [--kill-after-ms 5000] [--produce-after-kill-ms 8000] [--keep]
// The last line is a JSON summary; exit code 0 when no acknowledged message is missing.
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RemotingClient } from '../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../src/remoting/protocol/commands.js';

const require = createRequire(import.meta.url);
const { Producer, Consumer, Message } = require('ali-ons');

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const KILL_AFTER_MS = arg('kill-after-ms', 5000);
const PRODUCE_AFTER_KILL_MS = arg('produce-after-kill-ms', 8000);
const KEEP = process.argv.includes('--keep');
const TOPIC = 'FailoverDemo';
const CLUSTER = 'DemoCluster';
const GROUP = 'demo';
const quiet = { info() {}, debug() {}, warn() {}, error() {} };
const t0 = Date.now();
const say = (s) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${s}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Each process may take this long to print its start line (4 start at once; a loaded machine is slow).
const START_TIMEOUT_MS = 60_000;
// The built CLI when dist/ is up to date (`npm install` and `npm start` build it): a broker starts
// about 3x faster than through tsx, which compiles src/ in every process (measured 3.0-3.6 s vs
// 8.8-11.0 s for a nameserver at load 25). A stale or missing build runs src/ with tsx.
const BUILT = spawnSync(process.execPath, [join(root, 'scripts', 'build-if-stale.mjs'), '--check']).status === 0;
const CLI = BUILT ? [join(root, 'dist', 'cli', 'main.js')] : ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts')];
const CLI_NOTE = BUILT ? 'dist/cli/main.js' : 'src/cli/main.ts through tsx: dist/ is missing or stale, `npm run build` makes starts faster';

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function findEtcd() {
  for (const p of [process.env.ETCD_BIN, '/usr/bin/etcd', '/usr/local/bin/etcd']) if (p && existsSync(p)) return p;
  const r = spawnSync('sh', ['-c', 'command -v etcd'], { encoding: 'utf8' });
  if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
  throw new Error('etcd not found: install etcd-server or set ETCD_BIN');
}

const children = new Set();
function start(name, cmd, args, ready) {
  const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TSMQ_LOG_LEVEL: 'warn' } });
  const p = { name, child, log: '', exited: new Promise((r) => child.once('exit', r)) };
  children.add(p);
  const collect = (b) => (p.log = (p.log + b.toString()).slice(-100_000));
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  return (async () => {
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!(await ready(p))) {
      if (child.exitCode !== null) throw new Error(`${name} exited:\n${p.log}`);
      if (Date.now() > deadline) throw new Error(`${name} did not start within ${START_TIMEOUT_MS / 1000} s (${CLI_NOTE}); its output:\n${p.log || '(none yet)'}`);
      await sleep(100);
    }
    return p;
  })();
}
const tsmq = (name, args, ready) => start(name, process.execPath, [...CLI, ...args], (p) => ready.test(p.log));

async function cleanup(dir) {
  for (const p of children) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await Promise.all([...children].map((p) => p.exited));
  if (!KEEP) rmSync(dir, { recursive: true, force: true });
}

const admin = new RemotingClient({ connectTimeoutMs: 1000 });
/** The group as the controller reports it (CONTROLLER_GET_SYNC_STATE_DATA 1006, asked to any live replica). */
async function groupInfo(replicas) {
  for (const r of replicas) {
    if (!r.proc || r.proc.child.exitCode !== null || r.proc.child.signalCode !== null) continue;
    try {
      const res = await admin.invokeSync(r.addr, createRequestCommand(1006, null, Buffer.from(JSON.stringify([GROUP]))), 2000);
      if (res.code === 0) return JSON.parse(res.body.toString()).replicasInfoTable[GROUP] ?? null;
    } catch {
      // try the next replica
    }
  }
  return null;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'tsmq-failover-demo-'));
  process.once('SIGINT', () => void cleanup(dir).then(() => process.exit(130)));
  try {
    const etcdPort = await freePort();
    const etcdPeer = await freePort();
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    await start('etcd', findEtcd(), ['--name', 'demo', '--data-dir', join(dir, 'etcd'), '--listen-client-urls', etcdUrl, '--advertise-client-urls', etcdUrl, '--listen-peer-urls', `http://127.0.0.1:${etcdPeer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${etcdPeer}`, '--initial-cluster', `demo=http://127.0.0.1:${etcdPeer}`, '--log-level', 'warn'], async () => {
      try {
        return (await (await fetch(`${etcdUrl}/health`)).json()).health === 'true';
      } catch {
        return false;
      }
    });
    say(`etcd at ${etcdUrl}`);
    const nsPort = await freePort();
    const nameSrv = `127.0.0.1:${nsPort}`;
    await tsmq('namesrv', ['namesrv', '-p', String(nsPort)], /tsmq nameserver listening/);
    say(`nameserver at ${nameSrv}`);

    const replicas = [];
    for (const id of [1, 2, 3]) {
      const port = await freePort();
      const conf = join(dir, `replica${id}.conf`);
      const lines = {
        brokerClusterName: CLUSTER,
        brokerName: GROUP,
        brokerId: id,
        brokerRole: 'SLAVE',
        enableControllerMode: 'true',
        etcdEndpoints: etcdUrl,
        allAckInSyncStateSet: 'true',
        listenPort: port,
        haListenPort: await freePort(),
        namesrvAddr: nameSrv,
        storePathRootDir: join(dir, `replica${id}`),
        brokerIP1: '127.0.0.1',
        registerNameServerPeriod: 2000,
      };
      writeFileSync(conf, Object.entries(lines).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
      replicas.push({ id, addr: `127.0.0.1:${port}`, conf, proc: null });
    }
    const startReplica = async (r) => (r.proc = await tsmq(`replica${r.id}`, ['broker', '-c', r.conf], /tsmq broker started/));
    await Promise.all(replicas.map(startReplica));
    let info = null;
    while (!(info?.masterBrokerId && info.inSyncReplicas.length === 3)) {
      await sleep(200);
      info = await groupInfo(replicas);
    }
    say(`replicas ${replicas.map((r) => `${r.id}=${r.addr}`).join(', ')}; master is replica ${info.masterBrokerId} (epoch ${info.masterEpoch}), sync state set {${info.inSyncReplicas.map((m) => m.brokerId).join(',')}}`);
    for (const r of replicas) {
      const res = await admin.invokeSync(r.addr, createRequestCommand(17, { topic: TOPIC, defaultTopic: 'TBW102', readQueueNums: 4, writeQueueNums: 4, perm: 6, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false }), 3000);
      if (res.code !== 0) throw new Error(`create topic on ${r.addr}: ${res.code} ${res.remark}`);
    }

    // clients: route refresh every second (Apache and ali-ons default to 30 s) so they follow the new master quickly
    const clientOpts = { httpclient: {}, nameSrv, logger: quiet, pollNameServerInteval: 1000, heartbeatBrokerInterval: 1000, rebalanceInterval: 1000 };
    const producer = new Producer({ ...clientOpts, producerGroup: 'PID_FAILOVER_DEMO', sendMsgTimeout: 3000, retryTimesWhenSendFailed: 2 });
    await producer.ready();
    const consumed = new Map();
    const consumer = new Consumer({ ...clientOpts, consumerGroup: 'GID_FAILOVER_DEMO', consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET', persistConsumerOffsetInterval: 1000 });
    consumer.subscribe(TOPIC, '*', async (msg) => {
      const key = (msg.keys ?? '').split(' ')[0];
      consumed.set(key, (consumed.get(key) ?? 0) + 1);
    });
    consumer.on('error', () => undefined);
    producer.on('error', () => undefined);
    await consumer.ready();

    const acked = [];
    let failures = 0;
    let killedAt = 0;
    let firstAckAfterKill = 0;
    let producing = true;
    const produce = (async () => {
      for (let n = 0; producing; n++) {
        const m = new Message(TOPIC, 'demo', Buffer.from(`message ${n}`));
        m.keys = [`k-${n}`];
        try {
          const r = await producer.send(m);
          if (r.sendStatus === 'SEND_OK') {
            acked.push(`k-${n}`);
            if (killedAt && !firstAckAfterKill) firstAckAfterKill = Date.now();
          } else failures++;
        } catch {
          failures++;
          await sleep(50);
        }
      }
    })();

    await sleep(KILL_AFTER_MS);
    const oldMaster = replicas.find((r) => r.id === info.masterBrokerId);
    const oldEpoch = info.masterEpoch;
    say(`${acked.length} messages acknowledged so far; SIGKILL the master, replica ${oldMaster.id} (${oldMaster.addr})`);
    oldMaster.proc.child.kill('SIGKILL');
    await oldMaster.proc.exited;
    killedAt = Date.now();
    const ackedAtKill = acked.length;
    let electedMs = 0;
    while (!electedMs || !firstAckAfterKill) {
      await sleep(100);
      if (!electedMs) {
        const v = await groupInfo(replicas);
        if (v?.masterBrokerId && v.masterBrokerId !== oldMaster.id) {
          electedMs = Date.now() - killedAt;
          info = v;
          say(`replica ${v.masterBrokerId} (${v.masterAddress}) is the new master, epoch ${v.masterEpoch} (was ${oldEpoch}), elected ${electedMs} ms after the kill`);
        }
      }
      if (Date.now() - killedAt > 30_000) throw new Error('no failover within 30 s');
    }
    const failoverMs = firstAckAfterKill - killedAt;
    say(`first acknowledged send after the kill: ${failoverMs} ms (failed attempts meanwhile: ${failures})`);
    await startReplica(oldMaster);
    let rejoined = null;
    for (let i = 0; i < 100 && !(rejoined?.inSyncReplicas.length === 3); i++) {
      await sleep(200);
      rejoined = await groupInfo(replicas);
    }
    say(`replica ${oldMaster.id} restarted on its store: sync state set now {${rejoined?.inSyncReplicas.map((m) => m.brokerId).join(',')}}`);
    await sleep(Math.max(0, PRODUCE_AFTER_KILL_MS - (Date.now() - killedAt)));
    producing = false;
    await produce;
    say(`stopped producing: ${acked.length} acknowledged (${acked.length - ackedAtKill} after the kill), ${failures} failed attempts`);
    const deadline = Date.now() + 60_000;
    while (acked.some((k) => !consumed.has(k)) && Date.now() < deadline) await sleep(200);
    const missing = acked.filter((k) => !consumed.has(k));
    const redelivered = [...consumed.values()].filter((c) => c > 1).length;
    say(`consumed ${acked.length - missing.length} of ${acked.length} acknowledged messages; missing ${missing.length}; delivered more than once ${redelivered} (at-least-once)`);
    await producer.close();
    await consumer.close();
    const summary = { oldMaster: oldMaster.id, oldEpoch, newMaster: info.masterBrokerId, newEpoch: info.masterEpoch, electedMs, failoverMs, acked: acked.length, ackedAfterKill: acked.length - ackedAtKill, failedAttempts: failures, missing: missing.length, missingKeys: missing.slice(0, 10), redelivered, rejoinedSyncStateSet: rejoined?.inSyncReplicas.map((m) => m.brokerId) ?? [] };
    console.log(JSON.stringify(summary));
    return missing.length === 0 ? 0 : 1;
  } finally {
    await admin.close();
    await cleanup(dir);
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e);
    process.exit(2);
  },
);
