/**
 * Cost of the controller-mode confirm-offset bound (docs/failover.md "What consumers see"):
 * send → consumable latency with one slave in the sync state set (allAckInSyncStateSet=true,
 * SYNC sends), readUnCommitted=true (consumable at append / arrival, the behaviour before the
 * bound) vs false (consumable once confirmed). Master and slave stores in this process, real HA
 * sockets over loopback, ASYNC_FLUSH.
 *
 *   node --import tsx bench/ha/confirm-latency.ts [messages=3000] [producers=16]
 *
 * Prints one JSON line per mode: p50/p99/max (ms) of put → master arrival notice, put → slave
 * arrival notice, put → SEND_OK, and the closed-loop throughput (until the slave made the last
 * message consumable) and CPU per message with `producers` producers.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { silentLogger } from '../../src/common/logging/logger.js';
import { SyncStateSet } from '../../src/broker/controller/sync-state-set.js';
import { DefaultMessageStore } from '../../src/store/default-message-store.js';
import type { MessageInner } from '../../src/common/message/message.js';

const messages = Number(process.argv[2] ?? 3000);
const producers = Number(process.argv[3] ?? 16);

function message(i: number): MessageInner {
  return {
    topic: 'T',
    flag: 0,
    body: Buffer.alloc(1024, i % 251),
    properties: new Map([['KEYS', `k${i}`]]),
    queueId: 0,
    sysFlag: 0,
    bornTimestamp: Date.now(),
    bornHost: { ip: Buffer.from([127, 0, 0, 1]), port: 5000 },
    storeHost: { ip: Buffer.from([127, 0, 0, 1]), port: 10911 },
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
  };
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return Number((s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN).toFixed(3));
}

async function runMode(readUnCommitted: boolean): Promise<Record<string, unknown>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmq-confirm-bench-'));
  const base = { mappedFileSizeCommitLog: 64 * 1024 * 1024, readUnCommitted, messageIndexEnable: false };
  const master = await DefaultMessageStore.open({ ...base, storePathRootDir: path.join(dir, 'm'), brokerRole: 'SYNC_MASTER' }, { logger: silentLogger });
  const slave = await DefaultMessageStore.open({ ...base, storePathRootDir: path.join(dir, 's'), brokerRole: 'SLAVE' }, { logger: silentLogger });
  const rep = await master.switchReplication('MASTER', { listenPort: 0, host: '127.0.0.1' });
  const ha = rep.master!;
  const sss = new SyncStateSet({
    selfId: 1,
    masterEpoch: 1,
    epochStartOffset: 0,
    ha,
    maxOffset: () => master.getMaxPhyOffset(),
    writeRecord: async () => true,
    allAckInSyncStateSet: true,
    maxOutOfSyncMs: 60_000,
    slaveTimeoutMs: 10_000,
    fence: () => null,
    onConfirmChanged: () => master.confirmOffsetChanged(),
    logger: silentLogger,
  });
  await sss.init();
  master.setControllerHooks({ fence: () => null, ack: sss, confirm: sss });
  const checker = setInterval(() => void sss.check(), 100);
  await slave.switchReplication('SLAVE', { listenPort: 0, masterAddress: `127.0.0.1:${ha.port}`, helloReplicaId: 2, reconnectIntervalMs: 200 });
  while (sss.confirmedMembers().length < 2) await new Promise((r) => setTimeout(r, 20));

  const startedAt = new Map<number, number>(); // queue offset + 1 → put start
  const masterLat: number[] = [];
  const slaveLat: number[] = [];
  master.setMessageArrivingListener((_t, _q, next) => {
    const t0 = startedAt.get(next);
    if (t0 !== undefined) masterLat.push(performance.now() - t0);
  });
  slave.setMessageArrivingListener((_t, _q, next) => {
    const t0 = startedAt.get(next);
    if (t0 !== undefined) slaveLat.push(performance.now() - t0);
  });
  const ackLat: number[] = [];
  let next = 1;
  // sequential: one send at a time
  for (let i = 0; i < messages; i++) {
    const t0 = performance.now();
    startedAt.set(next++, t0);
    const r = await master.putMessage(message(i));
    if (r.status !== 'PUT_OK') throw new Error(`put ${i}: ${r.status}`);
    ackLat.push(performance.now() - t0);
  }
  while (slaveLat.length < messages) await new Promise((r) => setTimeout(r, 5));
  const sequential = {
    sendOkMs: { p50: pct(ackLat, 50), p99: pct(ackLat, 99), max: pct(ackLat, 100) },
    masterConsumableMs: { p50: pct(masterLat, 50), p99: pct(masterLat, 99), max: pct(masterLat, 100) },
    slaveConsumableMs: { p50: pct(slaveLat, 50), p99: pct(slaveLat, 99), max: pct(slaveLat, 100) },
  };
  // closed loop: `producers` concurrent senders, `messages` in total
  masterLat.length = 0;
  slaveLat.length = 0;
  let sent = 0;
  const cpu0 = process.cpuUsage();
  const loopStart = performance.now();
  await Promise.all(
    Array.from({ length: producers }, async () => {
      while (sent < messages) {
        const i = sent++;
        startedAt.set(next++, performance.now());
        const r = await master.putMessage(message(i));
        if (r.status !== 'PUT_OK') throw new Error(`put: ${r.status}`);
      }
    }),
  );
  while (slaveLat.length < messages) await new Promise((r) => setTimeout(r, 1));
  const loopMs = performance.now() - loopStart;
  const cpu = process.cpuUsage(cpu0);
  const result = {
    readUnCommitted,
    messages,
    sequential,
    closedLoop: {
      producers,
      msgsPerSec: Math.round(messages / (loopMs / 1000)),
      cpuUsPerMsg: Math.round((cpu.user + cpu.system) / messages),
      masterConsumableMs: { p50: pct(masterLat, 50), p99: pct(masterLat, 99) },
      slaveConsumableMs: { p50: pct(slaveLat, 50), p99: pct(slaveLat, 99) },
    },
  };
  clearInterval(checker);
  sss.stop('bench over');
  await slave.shutdown();
  await master.shutdown();
  fs.rmSync(dir, { recursive: true, force: true });
  return result;
}

const order = (process.env.ORDER ?? "true,false,true,false").split(",").map((x) => x === "true");
for (const mode of order) console.log(JSON.stringify(await runMode(mode)));
