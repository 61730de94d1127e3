/**
 * ProcessorTable.dispatch without an async function of its own: a handler that answers at once is
 * answered synchronously, one that returns a promise when it settles; a throw and a rejection are
 * both answered SYSTEM_ERROR with the error's message (Apache NettyRemotingAbstract), and the
 * response observer hears each with the answer's code; a gate still runs first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProcessorTable } from '../../../src/remoting/transport/processor-table.js';
import { createRequestCommand, createResponseCommand, markOneway } from '../../../src/remoting/protocol/commands.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { RPC_TYPE_RESPONSE, type RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import type { RemotingChannel } from '../../../src/remoting/processor/request-processor.js';

function channel(sent: RemotingCommand[]): RemotingChannel {
  return { id: 'c1', remoteAddress: '127.0.0.1:1', closed: false, send: (cmd) => void sent.push(cmd), close() {}, onClose() {} };
}

function observed(table: ProcessorTable): Array<[number, number, boolean]> {
  const seen: Array<[number, number, boolean]> = [];
  table.setResponseObserver((code, responseCode, latencyMs, oneway) => {
    assert.ok(latencyMs >= 0 && latencyMs < 10_000, `latency ${latencyMs} ms`);
    seen.push([code, responseCode, oneway]);
  });
  return seen;
}

test('a handler answering at once is answered before dispatch returns; a promise-returning one when it settles', async () => {
  const table = new ProcessorTable(silentLogger);
  const seen = observed(table);
  table.register(30, ({ request }) => createResponseCommand(request, ResponseCode.SUCCESS, null, { v: 1 }));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  table.register(31, async ({ request }) => {
    await gate;
    return createResponseCommand(request, ResponseCode.SUCCESS, null, { v: 2 });
  });
  const sent: RemotingCommand[] = [];
  const ch = channel(sent);
  const req = createRequestCommand(30, {});
  void table.dispatch(ch, req);
  assert.equal(sent.length, 1, 'answered synchronously');
  assert.equal(sent[0]!.opaque, req.opaque);
  assert.equal(sent[0]!.flag & RPC_TYPE_RESPONSE, RPC_TYPE_RESPONSE);
  assert.deepEqual(sent[0]!.extFields, { v: 1 });
  const pending = table.dispatch(ch, createRequestCommand(31, {}));
  await Promise.resolve();
  assert.equal(sent.length, 1, 'not before the handler settles');
  release();
  await pending;
  assert.equal(sent.length, 2);
  assert.deepEqual(sent[1]!.extFields, { v: 2 });
  assert.deepEqual(seen, [[30, 0, false], [31, 0, false]]);
});

test('a throwing handler and a rejecting one: SYSTEM_ERROR with the message, observed as SYSTEM_ERROR; oneway: no answer', async () => {
  const table = new ProcessorTable(silentLogger);
  const seen = observed(table);
  table.register(40, () => {
    throw new Error('thrown at once');
  });
  table.register(41, async () => {
    await Promise.resolve();
    throw new Error('rejected later');
  });
  const sent: RemotingCommand[] = [];
  const ch = channel(sent);
  await table.dispatch(ch, createRequestCommand(40, {}));
  await table.dispatch(ch, createRequestCommand(41, {}));
  await table.dispatch(ch, markOneway(createRequestCommand(41, {})));
  assert.deepEqual(sent.map((c) => [c.code, c.remark]), [[ResponseCode.SYSTEM_ERROR, 'thrown at once'], [ResponseCode.SYSTEM_ERROR, 'rejected later']]);
  assert.deepEqual(seen, [[40, ResponseCode.SYSTEM_ERROR, false], [41, ResponseCode.SYSTEM_ERROR, false], [41, ResponseCode.SYSTEM_ERROR, true]]);
});

test('an unknown code: REQUEST_CODE_NOT_SUPPORTED at once; a gate refusal is answered instead of the handler or the not-supported answer', async () => {
  const table = new ProcessorTable(silentLogger);
  let ran = 0;
  table.register(50, ({ request }) => {
    ran++;
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  });
  const sent: RemotingCommand[] = [];
  const ch = channel(sent);
  void table.dispatch(ch, createRequestCommand(999, {}));
  assert.deepEqual(sent.map((c) => [c.code, c.remark]), [[ResponseCode.REQUEST_CODE_NOT_SUPPORTED, ' request type 999 not supported']]);
  const handledSeen: boolean[] = [];
  table.setGate({
    check: async (_c, r, handled) => {
      handledSeen.push(handled);
      return r.extFields?.deny === 'yes' ? { code: ResponseCode.NO_PERMISSION, remark: 'denied' } : null;
    },
  });
  await table.dispatch(ch, createRequestCommand(50, { deny: 'yes' }));
  await table.dispatch(ch, createRequestCommand(50, { deny: 'no' }));
  await table.dispatch(ch, createRequestCommand(999, { deny: 'yes' }));
  await table.dispatch(ch, createRequestCommand(999, { deny: 'no' }));
  assert.deepEqual(sent.slice(1).map((c) => [c.code, c.remark]), [
    [ResponseCode.NO_PERMISSION, 'denied'],
    [ResponseCode.SUCCESS, null],
    [ResponseCode.NO_PERMISSION, 'denied'],
    [ResponseCode.REQUEST_CODE_NOT_SUPPORTED, ' request type 999 not supported'],
  ]);
  assert.deepEqual(handledSeen, [true, true, false, false]);
  assert.equal(ran, 1);
});

test('a handler that returns null and answers through its responder: answered then (observed, SYSTEM_ERROR for fail, nothing for oneway)', async () => {
  const table = new ProcessorTable(silentLogger);
  const seen = observed(table);
  const later: Array<() => void> = [];
  table.register(60, (rc) => {
    assert.ok(rc.respond, 'the dispatch hands a responder');
    later.push(() => rc.respond!.answer(createResponseCommand(rc.request, ResponseCode.SUCCESS, null, { late: 'yes' })));
    return null;
  });
  table.register(61, (rc) => {
    later.push(() => rc.respond!.fail(new Error('failed later')));
    return null;
  });
  const sent: RemotingCommand[] = [];
  const ch = channel(sent);
  const req = createRequestCommand(60, {});
  await table.dispatch(ch, req);
  await table.dispatch(ch, createRequestCommand(61, {}));
  await table.dispatch(ch, markOneway(createRequestCommand(60, {})));
  assert.equal(sent.length, 0, 'nothing before the responder is called');
  for (const f of later) f();
  assert.deepEqual(sent.map((c) => [c.code, c.remark, c.extFields]), [[ResponseCode.SUCCESS, null, { late: 'yes' }], [ResponseCode.SYSTEM_ERROR, 'failed later', null]]);
  assert.equal(sent[0]!.opaque, req.opaque);
  assert.deepEqual(seen, [[60, 0, false], [61, ResponseCode.SYSTEM_ERROR, false], [60, 0, true]]);
});
