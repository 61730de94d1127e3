/**
 * The public embedded-store API (src/index.ts): shapes, refusals with RocketMQ status codes,
 * consume() waking on dispatch (no polling) and ending on break / abort / close, and
 * startBroker's store seeing what a client produced.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageStore, MessageStoreError, StoreLockedError, startBroker, type StoredMessage } from '../../../src/index.js';
import { LeanClient } from '../../support/lean-client.js';
import { removeDir, tempDir } from '../../support/store-fixtures.js';

async function withStore(fn: (store: MessageStore, dir: string) => Promise<void>): Promise<void> {
  const dir = tempDir('tsmq-lib-');
  const store = await MessageStore.open({ storePathRootDir: dir, mappedFileSizeCommitLog: 64 * 1024, logLevel: 'silent' });
  try {
    await fn(store, dir);
  } finally {
    await store.close();
    removeDir(dir);
  }
}

test('putMessage/getMessage/queryMessage/lookMessageByOffset round-trip with public shapes', async () => {
  await withStore(async (store) => {
    const a = await store.putMessage({ topic: 'Orders', queueId: 1, body: 'one', tags: 'paid', keys: ['k1', 'k2'], properties: { region: 'eu' }, bornTimestampMs: 1234 });
    const b = await store.putMessage({ topic: 'Orders', queueId: 1, body: Buffer.from('two') });
    assert.equal(a.status, 'PUT_OK');
    assert.deepEqual([a.queueOffset, a.physicalOffset, b.queueOffset], [0, 0, 1]);
    assert.ok(b.physicalOffset > 0);
    const got = await store.getMessage({ group: 'G', topic: 'Orders', queueId: 1, offset: 0, maxMsgNums: 10 });
    assert.equal(got.status, 'FOUND');
    assert.equal(got.nextBeginOffset, 2);
    const m = got.messages[0]!;
    assert.deepEqual([m.topic, m.queueId, m.body.toString(), m.tags, m.keys, m.properties.region, m.bornTimestampMs, m.msgId], ['Orders', 1, 'one', 'paid', ['k1', 'k2'], 'eu', 1234, a.msgId]);
    assert.equal((await store.lookMessageByOffset(b.physicalOffset))!.body.toString(), 'two');
    assert.equal(await store.lookMessageByOffset(b.physicalOffset + 1_000_000), null);
    assert.deepEqual((await store.queryMessage({ topic: 'Orders', key: 'k2', maxNum: 5 })).map((x) => x.body.toString()), ['one']);
    assert.deepEqual([store.minOffset({ topic: 'Orders', queueId: 1 }), store.maxOffset({ topic: 'Orders', queueId: 1 })], [0, 2]);
    assert.equal(await store.getOffsetInQueueByTime({ topic: 'Orders', queueId: 1, timestampMs: 0 }), 0);
    const end = await store.getMessage({ group: 'G', topic: 'Orders', queueId: 1, offset: 2, maxMsgNums: 10 });
    assert.deepEqual([end.status, end.nextBeginOffset, end.messages.length], ['OFFSET_OVERFLOW_ONE', 2, 0]);
    await store.flush();
  });
});

test('putMessages is one atomic batch in one queue; bad input is refused with MESSAGE_ILLEGAL and stores nothing', async () => {
  await withStore(async (store) => {
    const rs = await store.putMessages([{ topic: 'B', body: 'a' }, { topic: 'B', body: 'b' }, { topic: 'B', body: 'c' }]);
    assert.deepEqual(rs.map((r) => r.queueOffset), [0, 1, 2]);
    assert.equal(new Set(rs.map((r) => r.storeTimestampMs)).size, 1);
    const refused = async (f: () => Promise<unknown>, code: string, re: RegExp): Promise<void> => {
      await assert.rejects(f, (e: unknown) => e instanceof MessageStoreError && e.code === code && re.test(e.message));
    };
    await refused(() => store.putMessages([{ topic: 'B', body: 'x' }, { topic: 'B', queueId: 1, body: 'y' }]), 'MESSAGE_ILLEGAL', /one topic and queue/);
    await refused(() => store.putMessage({ topic: 'bad topic', body: 'x' }), 'MESSAGE_ILLEGAL', /characters other than/);
    await refused(() => store.putMessage({ topic: 'B', body: '' }), 'MESSAGE_ILLEGAL', /body is empty/);
    await refused(() => store.putMessage({ topic: 'B', queueId: -1, body: 'x' }), 'MESSAGE_ILLEGAL', /queueId/);
    await refused(() => store.putMessage({ topic: 'B', body: 'x', properties: { a: 'x\u0001y' } }), 'MESSAGE_ILLEGAL', /\\u0001/);
    await refused(() => store.putMessage({ topic: 'B', body: Buffer.alloc(store.config.maxMessageSize + 1) }), 'MESSAGE_ILLEGAL', /maxMessageSize/);
    assert.equal(store.maxOffset({ topic: 'B', queueId: 0 }), 3);
    assert.equal(store.maxOffset({ topic: 'B', queueId: 1 }), 0);
  });
});

test('a second open of the same store is refused while the first holds it', async () => {
  await withStore(async (_store, dir) => {
    await assert.rejects(MessageStore.open({ storePathRootDir: dir, logLevel: 'silent' }), StoreLockedError);
  });
});

test('consume() yields the backlog, then waits for new messages (woken by dispatch), and ends on break, abort and close', async () => {
  await withStore(async (store) => {
    await store.putMessage({ topic: 'C', body: 'm0' });
    const seen: string[] = [];
    const t0 = Date.now();
    const loop = (async () => {
      for await (const m of store.consume({ topic: 'C', from: 'first' })) {
        seen.push(`${m.queueOffset}:${m.body}`);
        if (m.queueOffset === 2) break;
      }
    })();
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(seen, ['0:m0']);
    await store.putMessage({ topic: 'C', body: 'm1' });
    await store.putMessage({ topic: 'C', body: 'm2' });
    await loop;
    assert.deepEqual(seen, ['0:m0', '1:m1', '2:m2']);
    assert.ok(Date.now() - t0 < 1000);

    // 'last' skips the backlog; abort ends a waiting loop
    const ac = new AbortController();
    const tail: StoredMessage[] = [];
    const waiting = (async () => {
      for await (const m of store.consume({ topic: 'C', from: 'last', signal: ac.signal })) tail.push(m);
    })();
    await new Promise((r) => setTimeout(r, 20));
    await store.putMessage({ topic: 'C', body: 'm3' });
    await new Promise((r) => setTimeout(r, 20));
    ac.abort();
    await waiting;
    assert.deepEqual(tail.map((m) => m.queueOffset), [3]);

    // close ends a loop waiting on an empty queue
    const onEmpty = (async () => {
      let n = 0;
      for await (const _ of store.consume({ topic: 'Empty' })) n++;
      return n;
    })();
    await new Promise((r) => setTimeout(r, 20));
    await store.close();
    assert.equal(await onEmpty, 0);
  });
});

test("startBroker: free ports, the broker's store sees what a remoting client sent, and close() deletes the temp store", async () => {
  const broker = await startBroker({ logLevel: 'silent' });
  const { existsSync } = await import('node:fs');
  try {
    assert.match(broker.namesrvAddr!, /^127\.0\.0\.1:\d+$/);
    assert.match(broker.brokerAddr, /^127\.0\.0\.1:\d+$/);
    assert.match(broker.grpcEndpoint!, /^127\.0\.0\.1:\d+$/);
    assert.ok(existsSync(broker.storePathRootDir));
    const arrived = (async () => {
      for await (const m of broker.store.consume({ topic: 'LibT', queueId: 0 })) return m;
      return null;
    })();
    const client = new LeanClient(broker.brokerAddr);
    try {
      const r = await client.send('LibT', 0, Buffer.from('via remoting'));
      assert.equal(r.code, 0);
    } finally {
      client.close();
    }
    const m = await arrived;
    assert.equal(m!.body.toString(), 'via remoting');
    assert.equal(m!.msgId.slice(0, 8), '7F000001');
    assert.equal(parseInt(m!.msgId.slice(8, 16), 16), Number(broker.brokerAddr.split(':')[1]));
    await assert.rejects(broker.store.close(), /belongs to a broker/);
  } finally {
    await broker.close();
  }
  assert.equal(existsSync(broker.storePathRootDir), false);
});

/**
 * The local addresses of the listening TCP sockets on `port`, from /proc/net/tcp and tcp6
 * (Linux): `127.0.0.1`, `0.0.0.0`, `::`, ... One entry per socket.
 */
async function listenAddresses(port: number): Promise<string[]> {
  const { readFileSync } = await import('node:fs');
  const out: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try { text = readFileSync(file, 'utf8'); } catch { continue; }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 4 || cols[3] !== '0A') continue; // 0A = LISTEN
      const [hexAddr, hexPort] = cols[1]!.split(':');
      if (parseInt(hexPort!, 16) !== port) continue;
      if (hexAddr!.length === 8) {
        out.push([3, 2, 1, 0].map((i) => parseInt(hexAddr!.slice(i * 2, i * 2 + 2), 16)).join('.'));
      } else {
        out.push(/^0+$/.test(hexAddr!) ? '::' : hexAddr!.toLowerCase());
      }
    }
  }
  return out;
}

test('startBroker: the broker remoting port listens on 127.0.0.1 only by default (bindAddress=127.0.0.1), like tsmq start', { skip: process.platform !== 'linux' ? 'reads /proc/net/tcp' : false }, async () => {
  const broker = await startBroker({ logLevel: 'silent', grpc: false });
  try {
    const port = Number(broker.brokerAddr.split(':')[1]);
    assert.deepEqual(await listenAddresses(port), ['127.0.0.1']);
  } finally {
    await broker.close();
  }
  const open = await startBroker({ logLevel: 'silent', grpc: false, brokerConfig: { bindAddress: '0.0.0.0' } });
  try {
    assert.deepEqual(await listenAddresses(Number(open.brokerAddr.split(':')[1])), ['0.0.0.0']);
  } finally {
    await open.close();
  }
});
