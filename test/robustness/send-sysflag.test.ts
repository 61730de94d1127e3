/**
 * Careless sysFlag values on SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE against a real `tsmq start`
 * (one process for the file); every acknowledged message is pulled back at its offset.
 *
 * Defect pinned here: a plain send whose sysFlag carried the transaction type PREPARED (0x4) or
 * ROLLBACK (0xC) without TRAN_MSG=true was answered SEND_OK (queueOffset 0) and then never
 * delivered (such records are not dispatched to a ConsumeQueue). Apache 5.3.3 does the same;
 * tsmq now refuses it with MESSAGE_ILLEGAL (13). Batches refuse every transaction type, as
 * Apache's CommitLog.putMessages does.
 *
 * Defect pinned here: a body flagged COMPRESSED (sysFlag 0x1) that is not zlib data (or names an
 * unknown compression type) was stored as sent, as Apache does; Apache's Java consumer then fails
 * to decompress it and drops it and every later message of the same pull reply while its offset
 * moves on (MessageDecoder.decodes stops at the first undecodable record). Now 13 MESSAGE_ILLEGAL.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import fc from 'fast-check';
import { FUZZ_SEED } from '../fuzz/fuzz-config.js';
import { TsmqProcess } from '../support/tsmq-process.js';
import { LeanClient } from '../support/lean-client.js';

const TOPIC = 'SysFlagTopic';
let store: string;
let broker: TsmqProcess;
let client: LeanClient;

before(async () => {
  store = mkdtempSync(join(tmpdir(), 'tsmq-sysflag-'));
  broker = await TsmqProcess.start({ storeDir: store });
  client = new LeanClient(broker.brokerAddr);
  await client.ready;
});

after(async () => {
  client?.close();
  await broker?.stop();
  rmSync(store, { recursive: true, force: true });
});

function sendWithSysFlag(sysFlag: number, body: string | Buffer, properties = ''): ReturnType<LeanClient['invoke']> {
  return client.invoke(310, { a: 'PID_SYSFLAG', b: TOPIC, c: 'TBW102', d: 4, e: 0, f: sysFlag, g: Date.now(), h: 0, i: properties, j: 0, k: false }, Buffer.from(body));
}

async function pulledBody(queueOffset: number): Promise<string> {
  const r = await client.pull('SysFlagVerify', TOPIC, 0, queueOffset, 1);
  assert.equal(r.code, 0, `pull at ${queueOffset}: ${r.code} ${r.remark}`);
  return r.body.toString('latin1');
}

test('sysFlag with transaction type PREPARED/ROLLBACK and no TRAN_MSG is refused (13), never acknowledged and lost', async () => {
  for (const sysFlag of [0x4, 0xc, -1, 0x7fffffff]) {
    const r = await sendWithSysFlag(sysFlag, `tran-bits-${sysFlag}`);
    assert.equal(r.code, 13, `sysFlag ${sysFlag}: ${r.code} ${r.remark}`);
    assert.match(r.remark ?? '', /marks a transaction (PREPARED|ROLLBACK) message but property TRAN_MSG is not "true"/);
  }
});

test('every other sysFlag a send may carry is acknowledged and delivered at its offset', async () => {
  // 0 plain, 0x8 COMMIT (dispatched), 0x10/0x30 V6 host flags (tsmq writes the real host lengths),
  // 0x2 MULTI_TAGS, 0x80 INNER_BATCH, 0x100 LZ4 type bits
  for (const sysFlag of [0, 0x8, 0x10, 0x30, 0x2, 0x80, 0x100]) {
    const body = `ok-${sysFlag}`;
    const r = await sendWithSysFlag(sysFlag, body);
    assert.equal(r.code, 0, `sysFlag ${sysFlag}: ${r.code} ${r.remark}`);
    assert.ok((await pulledBody(Number(r.extFields.queueOffset))).includes(body), `sysFlag ${sysFlag}: body at offset ${r.extFields.queueOffset}`);
  }
});

test('a transactional producer (PREPARED + TRAN_MSG=true) still gets its half message accepted', async () => {
  const r = await sendWithSysFlag(0x4, 'half', 'TRAN_MSG\u0001true\u0002PGROUP\u0001PID_SYSFLAG\u0002');
  assert.equal(r.code, 0, `${r.code} ${r.remark}`);
});

test('a batch with any transaction type is refused (13), as Apache putMessages does', async () => {
  const item = Buffer.from('batch-item');
  // one batch item: TOTALSIZE MAGICCODE BODYCRC FLAG BODYLEN BODY PROPLEN(short)
  const b = Buffer.alloc(20 + item.length + 2);
  b.writeInt32BE(b.length, 0);
  b.writeInt32BE(0, 4);
  b.writeInt32BE(0, 8);
  b.writeInt32BE(0, 12);
  b.writeInt32BE(item.length, 16);
  item.copy(b, 20);
  b.writeInt16BE(0, 20 + item.length);
  const ext = { a: 'PID_SYSFLAG', b: TOPIC, c: 'TBW102', d: 4, e: 0, g: Date.now(), h: 0, i: '', j: 0, k: false, m: true };
  for (const f of [0x4, 0x8, 0xc]) {
    const r = await client.invoke(320, { ...ext, f }, b);
    assert.equal(r.code, 13, `batch sysFlag ${f}: ${r.code} ${r.remark}`);
    assert.match(r.remark ?? '', /a batch cannot be transactional/);
  }
  const ok = await client.invoke(320, { ...ext, f: 0 }, b);
  assert.equal(ok.code, 0, `${ok.code} ${ok.remark}`);
  assert.ok((await pulledBody(Number(ok.extFields.queueOffset))).includes('batch-item'));
});

test('COMPRESSED with a body that is not zlib, or an unknown compression type, is refused (13); a zlib body is stored as sent', async () => {
  const bad = await sendWithSysFlag(0x1, 'plain text, not zlib');
  assert.equal(bad.code, 13, `${bad.code} ${bad.remark}`);
  assert.equal(bad.remark, 'sysFlag marks the body COMPRESSED (zlib) but it does not start with a zlib header (first bytes 706c6169)');
  const unknownType = await sendWithSysFlag(0x401, deflateSync('x'));
  assert.equal(unknownType.code, 13);
  assert.match(unknownType.remark ?? '', /unknown compression type 4/);
  const zipped = deflateSync(Buffer.from('zipped-body'));
  const ok = await sendWithSysFlag(0x1, zipped);
  assert.equal(ok.code, 0, `${ok.code} ${ok.remark}`);
  assert.ok((await pulledBody(Number(ok.extFields.queueOffset))).includes(zipped.toString('latin1')), 'the compressed bytes are stored as sent');
});

test(`property: whatever sysFlag, body and user properties a send carries, SEND_OK means the body is served at the returned offset (300 cases, seed ${FUZZ_SEED})`, async () => {
  // user property keys are lower case, so no system property (DELAY, TRAN_MSG, TIMER_*...) moves the message elsewhere
  const props = fc.oneof(
    fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), fc.string({ maxLength: 20 }).map((v) => v.replace(/[\u0001\u0002]/g, ''))).map((d) => Object.entries(d).map(([k, v]) => `${k}\u0001${v}\u0002`).join('')),
    fc.stringMatching(/^[a-z\u0001\u0002=]{0,40}$/),
  );
  const sysFlag = fc.oneof(fc.integer(), fc.integer({ min: 0, max: 0x7ff }), fc.constantFrom(0, 1, 2, 4, 8, 12, 0x10, 0x20, 0x40, 0x80, 0x101, 0x201, 0x301, 0x401));
  const body = fc.oneof(fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)), fc.uint8Array({ maxLength: 200 }).map((b) => deflateSync(b)));
  let stored = 0;
  await fc.assert(
    fc.asyncProperty(sysFlag, body, props, async (f, b, i) => {
      const r = await sendWithSysFlag(f, b, i);
      assert.ok(r.code === 0 || r.code === 13, `sysFlag ${f}: ${r.code} ${r.remark}`);
      if (r.code !== 0) return;
      stored++;
      const pulled = await client.pull('SysFlagVerify', TOPIC, Number(r.extFields.queueId), Number(r.extFields.queueOffset), 1);
      assert.equal(pulled.code, 0, `sysFlag ${f}: acknowledged at ${r.extFields.queueOffset} but the pull answers ${pulled.code} ${pulled.remark}`);
      assert.ok(pulled.body.includes(b), `sysFlag ${f}: acknowledged at ${r.extFields.queueOffset} but that record does not hold the body`);
    }),
    { seed: FUZZ_SEED, numRuns: 300 },
  );
  assert.ok(stored > 100, `most cases are stored (${stored}/300)`);
});
