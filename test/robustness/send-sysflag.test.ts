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
