import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createRequestCommand, createResponseCommand, CURRENT_VERSION, isOneway, isResponse, markOneway, MQ_VERSION_V4_9_4, nextOpaque,
} from '../../../src/remoting/protocol/commands.js';

test('requests: increasing process-wide opaque, JAVA, V4_9_4 (401), JSON', () => {
  const a = createRequestCommand(105, { topic: 'T' });
  const b = createRequestCommand(34, null, Buffer.from('x'));
  assert.equal(b.opaque, a.opaque + 1);
  assert.equal(a.language, 'JAVA');
  assert.equal(MQ_VERSION_V4_9_4, 401);
  assert.equal(a.version, CURRENT_VERSION);
  assert.equal(a.flag, 0);
  assert.equal(a.remark, null);
  assert.equal(a.serializeTypeCurrentRPC, 0);
  assert.deepEqual(a.extFields, { topic: 'T' });
  assert.equal(b.extFields, null);
  assert.equal(b.body!.toString(), 'x');
  assert.equal(isResponse(a), false);
  assert.equal(isOneway(a), false);
  assert.ok(nextOpaque() > 0);
});

test('responses echo opaque, set bit 0 and keep the request serialize type', () => {
  const req = { ...createRequestCommand(105), opaque: 77, serializeTypeCurrentRPC: 1 as const };
  const resp = createResponseCommand(req, 17, 'nope', { a: 1 }, Buffer.from('b'));
  assert.equal(resp.opaque, 77);
  assert.equal(resp.flag, 1);
  assert.equal(resp.code, 17);
  assert.equal(resp.remark, 'nope');
  assert.equal(resp.serializeTypeCurrentRPC, 1);
  assert.equal(isResponse(resp), true);
  assert.equal(isOneway(markOneway(createRequestCommand(15))), true);
});
