/**
 * ProcessorTable and a response's `onWritten` hook (a pull reply's store body and read-cache
 * leases are given back from it): a response that is never written — the request was oneway —
 * still hears its hook once, with an error, so what it holds is released rather than left to the
 * GC (a lent read-cache chunk would stay leased).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProcessorTable } from '../../../src/remoting/transport/processor-table.js';
import { createRequestCommand, createResponseCommand, markOneway } from '../../../src/remoting/protocol/commands.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import type { RemotingChannel } from '../../../src/remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';

function channel(sent: RemotingCommand[]): RemotingChannel {
  return { id: 'c1', remoteAddress: '127.0.0.1:1', closed: false, send: (cmd) => void sent.push(cmd), close() {}, onClose() {} };
}

test('a oneway request: the handler response is not sent, its onWritten runs once with an error', async () => {
  const table = new ProcessorTable(silentLogger);
  const calls: Array<Error | null | undefined> = [];
  table.register(11, async ({ request }) => {
    const res = createResponseCommand(request, 0, null, null, Buffer.from('body'));
    res.onWritten = (err) => void calls.push(err);
    return res;
  });
  const sent: RemotingCommand[] = [];
  await table.dispatch(channel(sent), markOneway(createRequestCommand(11, {})));
  assert.equal(sent.length, 0, 'no reply to a oneway request');
  assert.equal(calls.length, 1);
  assert.ok(calls[0] instanceof Error);
});

test('a normal request: the response is handed to the channel with its onWritten (the channel calls it)', async () => {
  const table = new ProcessorTable(silentLogger);
  let hooks = 0;
  table.register(11, async ({ request }) => {
    const res = createResponseCommand(request, 0, null, null, Buffer.from('body'));
    res.onWritten = () => void hooks++;
    return res;
  });
  const sent: RemotingCommand[] = [];
  await table.dispatch(channel(sent), createRequestCommand(11, {}));
  assert.equal(sent.length, 1);
  assert.equal(hooks, 0, 'not called by the table itself');
  assert.equal(typeof sent[0]!.onWritten, 'function');
});
