/**
 * Manual trigger end to end: `tsmq admin delete-expired-commitlog -b <addr>` sends request code
 * DELETE_EXPIRED_COMMITLOG (329) and the broker runs `store.executeDeleteFilesManually()`.
 * The server here registers the same handler the broker's processor table is expected to have.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Command } from 'commander';
import { registerAdminCommands } from '../../../src/cli/commands/admin-delete-expired.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { createResponseCommand } from '../../../src/remoting/protocol/commands.js';
import { RemotingServer } from '../../../src/remoting/transport/remoting-server.js';
import type { MessageStore } from '../../../src/store/message-store.js';
import { removeDir, tempDir } from '../../support/store-fixtures.js';
import { HOUR_MS, fillCommitLogFiles, localTime, openRetentionStore, retentionConfig, setAge } from './retention-support.js';

async function runCli(args: string[]): Promise<{ out: string[]; error: Error | null }> {
  const program = new Command().exitOverride();
  registerAdminCommands(program);
  const out: string[] = [];
  const log = console.log;
  console.log = (...a: unknown[]) => void out.push(a.join(' '));
  try {
    await program.parseAsync(['node', 'tsmq', ...args]);
    return { out, error: null };
  } catch (e) {
    return { out, error: e as Error };
  } finally {
    console.log = log;
  }
}

test('request code DELETE_EXPIRED_COMMITLOG is 329 (Apache RequestCode)', () => {
  assert.equal(RequestCode.DELETE_EXPIRED_COMMITLOG, 329);
});

test('tsmq admin delete-expired-commitlog -b <addr> deletes expired files at 15:30 (outside deleteWhen)', async () => {
  const root = tempDir();
  const server = new RemotingServer({ listenPort: 0, host: '127.0.0.1' });
  try {
    const { store } = await openRetentionStore(retentionConfig(root), { nowMs: localTime(15) });
    await fillCommitLogFiles(store, 4);
    const files = store.commitLog.mfq.getFiles();
    [90, 80, 1, 0].forEach((h, i) => setAge(store, files[i]!, localTime(15), h * HOUR_MS));
    const asContract: MessageStore = store;
    server.registerProcessor(RequestCode.DELETE_EXPIRED_COMMITLOG, async ({ request }) => {
      await asContract.executeDeleteFilesManually?.();
      return createResponseCommand(request, ResponseCode.SUCCESS, null);
    });
    await server.start();
    const addr = `127.0.0.1:${server.port}`;
    const r = await runCli(['admin', 'delete-expired-commitlog', '-b', addr]);
    assert.equal(r.error, null);
    assert.deepEqual(r.out, [`broker ${addr}: expired CommitLog files deleted`]);
    assert.equal(store.getMinPhyOffset(), 2 * 4096);
    assert.equal(store.commitLog.mfq.getFiles().length, 2);
    // a broker without the handler: a clear error
    const bare = new RemotingServer({ listenPort: 0, host: '127.0.0.1' });
    await bare.start();
    try {
      const r2 = await runCli(['admin', 'delete-expired-commitlog', '-b', `127.0.0.1:${bare.port}`]);
      assert.match(r2.error!.message, /does not support DELETE_EXPIRED_COMMITLOG \(329\)/);
    } finally {
      await bare.shutdown();
    }
    await store.shutdown();
  } finally {
    await server.shutdown();
    removeDir(root);
  }
});
