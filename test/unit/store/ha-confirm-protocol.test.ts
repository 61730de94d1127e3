/**
 * The controller-mode confirm-offset extension of the HA protocol (ha-protocol.ts): the confirm
 * hello, the confirm frame, and compatibility with tsmq peers that do not speak it (a master
 * that sends no confirm frame; a slave that sent no confirm hello).
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import type { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import {
  encodeConfirmFrame,
  encodeConfirmHello,
  encodeHello,
  encodeReport,
  FrameReader,
  HA_CONFIRM_HELLO_ID,
  HA_HELLO_BASE,
  ReportReader,
  writeFrameHeader,
  type FrameEvent,
} from '../../../src/store/ha/ha-protocol.js';
import { RawHAPeer, waitUntil } from '../../support/ha-cluster.js';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function open(role: 'ASYNC_MASTER' | 'SLAVE'): Promise<DefaultMessageStore> {
  const root = tempDir('tsmq-confirm-proto-');
  const store = await openStore(smallConfig(root, { brokerRole: role, mappedFileSizeCommitLog: 64 * 1024 }));
  cleanups.push(async () => {
    await store.shutdown();
    removeDir(root);
  });
  return store;
}

/** Splits a master → slave byte stream into frames: [offset, bodySize] (body skipped). */
function frameHeaders(stream: Buffer): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let i = 0;
  while (i + 12 <= stream.length) {
    const size = stream.readInt32BE(i + 8);
    out.push([Number(stream.readBigInt64BE(i)), size]);
    i += 12 + Math.max(0, size);
  }
  return out;
}

describe('HA confirm-offset extension', () => {
  it('wire: the confirm hello is a hello of the reserved id; a confirm frame is a header with bodySize -1', () => {
    const hellos = Buffer.concat([encodeConfirmHello(), encodeHello(2)]);
    // what a master without the extension does: any value in the hello range is a hello, the last id wins
    const ids = [0, 8].map((at) => Number(HA_HELLO_BASE - hellos.readBigInt64BE(at)));
    assert.deepEqual(ids, [HA_CONFIRM_HELLO_ID, 2]);
    const r = new ReportReader();
    assert.equal(r.push(Buffer.concat([hellos, encodeReport(0)])), 0);
    assert.equal(r.helloReplicaId, 2);
    assert.equal(r.confirmCapable, true);
    assert.deepEqual([...encodeConfirmFrame(4096)], [0, 0, 0, 0, 0, 0, 0x10, 0, 0xff, 0xff, 0xff, 0xff]);
    const events: FrameEvent[] = [...new FrameReader(1024).push(encodeConfirmFrame(4096))];
    assert.deepEqual(events, [{ kind: 'confirm', confirmOffset: 4096 }]);
    assert.throws(() => encodeConfirmFrame(-1), RangeError);
  });

  it('a master sends a confirm frame first to a slave that sent the confirm hello, and none to a slave that did not', async () => {
    const master = await open('ASYNC_MASTER');
    for (let i = 0; i < 3; i++) assert.equal((await master.putMessage(makeMessage({ body: `m${i}` }))).status, 'PUT_OK');
    const replication = await master.switchReplication('MASTER', { listenPort: 0, host: '127.0.0.1' });
    const port = replication.master!.port;
    const max = master.getMaxPhyOffset();

    const capable = await RawHAPeer.connect(port);
    cleanups.push(() => capable.destroy());
    capable['socket'].write(Buffer.concat([encodeConfirmHello(), encodeHello(2)]));
    capable.report(0);
    const old = await RawHAPeer.connect(port);
    cleanups.push(() => old.destroy());
    old['socket'].write(encodeHello(3));
    old.report(0);
    const dataOf = (p: RawHAPeer): number => frameHeaders(p.received).reduce((n, [, s]) => n + Math.max(0, s), 0);
    await waitUntil(() => dataOf(capable) >= max && dataOf(old) >= max, 3000, () => `received ${dataOf(capable)} / ${dataOf(old)} of ${max}`);
    const first = frameHeaders(capable.received)[0]!;
    assert.deepEqual(first, [max, -1], 'confirm frame (the max offset: the sync state set is the master alone) before any data');
    assert.ok(frameHeaders(old.received).every(([, s]) => s >= 0), 'no confirm frame to a slave without the confirm hello');
  });

  it('a slave whose master sends no confirm frame (older tsmq) is not bounded: replicated messages become consumable', async () => {
    const source = await open('ASYNC_MASTER');
    for (let i = 0; i < 2; i++) assert.equal((await source.putMessage(makeMessage({ body: `m${i}`, queueId: 0 }))).status, 'PUT_OK');
    const bytes = Buffer.from(source.commitLog.getData(0, source.getMaxPhyOffset())!);
    // a master speaking only the classic protocol: waits for the first report, sends the log, then heartbeats
    const sockets: Socket[] = [];
    const server = createServer((s) => {
      sockets.push(s);
      s.on('error', () => undefined);
      let got = Buffer.alloc(0);
      s.on('data', (d: Buffer) => {
        got = Buffer.concat([got, d]);
        if (got.length === 24) {
          const frame = Buffer.alloc(12 + bytes.length);
          writeFrameHeader(frame, 0, 0, bytes.length);
          bytes.copy(frame, 12);
          s.write(frame);
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    }));
    const slave = await open('SLAVE');
    await slave.switchReplication('SLAVE', { listenPort: 0, masterAddress: `127.0.0.1:${(server.address() as { port: number }).port}`, helloReplicaId: 2, reconnectIntervalMs: 200 });
    await waitUntil(() => slave.getMaxOffsetInQueue('T', 0) === 2, 3000, () => `slave consumable ${slave.getMaxOffsetInQueue('T', 0)}, max ${slave.getMaxPhyOffset()} of ${bytes.length}`);
  });
});
