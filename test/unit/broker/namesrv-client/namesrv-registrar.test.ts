/**
 * NamesrvRegistrar scheduling: a topic change sends only that topic; changes arriving during a
 * registration fold into one follow-up increment; a pending full registration absorbs them; a
 * failed increment is followed by a full registration. The BrokerOuterApi is a recording
 * stand-in whose replies the test releases one by one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NamesrvRegistrar } from '../../../../src/broker/namesrv-client/namesrv-registrar.js';
import type { BrokerOuterApi, RegisterOutcome } from '../../../../src/broker/namesrv-client/broker-outer-api.js';

interface Sent { topics: string[]; brokerId: number; release(ok: boolean): void }

function harness(): { registrar: NamesrvRegistrar; sent: Sent[]; table: Set<string>; identity: { brokerId: number } } {
  const sent: Sent[] = [];
  const identity = { brokerId: 0 };
  const table = new Set(['A', 'B', 'C', 'D']);
  const wrap = (names: string[]) => ({ topicConfigTable: Object.fromEntries(names.map((n) => [n, { topicName: n }])), dataVersion: {} });
  const api = {
    registerBrokerAll: (_id: unknown, wrapper: { topicConfigTable: Record<string, unknown> }) =>
      new Promise<RegisterOutcome[]>((resolve) => {
        sent.push({ topics: Object.keys(wrapper.topicConfigTable).sort(), brokerId: (_id as { brokerId: number }).brokerId, release: (ok) => resolve([{ namesrvAddr: 'ns', ok }]) });
      }),
    unregisterBrokerAll: async () => undefined,
  } as unknown as BrokerOuterApi;
  const registrar = new NamesrvRegistrar({
    api,
    identity: () => ({ clusterName: 'C', brokerName: 'b', brokerAddr: 'x:1', brokerId: identity.brokerId, haServerAddr: 'x:2' }),
    topics: () => wrap([...table]),
    topicsIncrement: (names) => {
      const present = names.filter((n) => table.has(n));
      return present.length === 0 ? null : wrap(present);
    },
    periodMs: 60_000,
  });
  return { registrar, sent, table, identity };
}

const tick = () => new Promise((r) => setImmediate(r));

test('increments carry only the changed topics and fold while one is in flight', async () => {
  const { registrar, sent } = harness();
  void registrar.registerTopics(['A']);
  assert.deepEqual(sent.map((s) => s.topics), [['A']]);
  void registrar.registerTopics(['B']);
  void registrar.registerTopics(['C']);
  void registrar.registerTopics(['B']);
  assert.equal(sent.length, 1, 'nothing sent while a registration runs');
  sent[0]!.release(true);
  await tick();
  await tick();
  assert.deepEqual(sent.map((s) => s.topics), [['A'], ['B', 'C']]);
  sent[1]!.release(true);
  await tick();
  assert.equal(sent.length, 2);
});

test('a pending full registration absorbs pending increments; a topic gone before sending is skipped', async () => {
  const { registrar, sent, table } = harness();
  void registrar.registerTopics(['A']);
  void registrar.registerTopics(['B']);
  void registrar.registerNow();
  sent[0]!.release(true);
  await tick();
  await tick();
  assert.deepEqual(sent.map((s) => s.topics), [['A'], ['A', 'B', 'C', 'D']]);
  sent[1]!.release(true);
  await tick();
  table.delete('D');
  const r = await registrar.registerTopics(['D']);
  assert.deepEqual(r, []);
  assert.equal(sent.length, 2, 'nothing to send for a deleted topic');
});

test('a failed increment is followed by a full registration; a failed full one is not retried at once', async () => {
  const { registrar, sent } = harness();
  void registrar.registerTopics(['A']);
  sent[0]!.release(false);
  await tick();
  await tick();
  assert.deepEqual(sent.map((s) => s.topics), [['A'], ['A', 'B', 'C', 'D']]);
  sent[1]!.release(false);
  await tick();
  await tick();
  assert.equal(sent.length, 2);
  await registrar.shutdown();
});

test('registerTopics settles after the registration that carried the topic; after a refused increment, after the full registration that followed', async () => {
  const { registrar, sent } = harness();
  const settled: string[] = [];
  void registrar.registerTopics(['A']).then((o) => settled.push(`A:${o.map((x) => x.ok).join()}`));
  void registrar.registerTopics(['B']).then((o) => settled.push(`B:${o.map((x) => x.ok).join()}`));
  await tick();
  assert.deepEqual(settled, [], 'nothing settles while the increment of A is in flight');
  sent[0]!.release(true);
  await tick();
  await tick();
  assert.deepEqual(settled, ['A:true'], 'B was not in that registration: it still waits');
  assert.deepEqual(sent.map((s) => s.topics), [['A'], ['B']]);
  sent[1]!.release(false); // e.g. Apache 5.3.3: one-topic registration of an unknown broker → SYSTEM_ERROR
  await tick();
  await tick();
  assert.deepEqual(settled, ['A:true'], 'B waits for the full registration that follows the refused increment');
  assert.deepEqual(sent.map((s) => s.topics), [['A'], ['B'], ['A', 'B', 'C', 'D']]);
  sent[2]!.release(true);
  await tick();
  await tick();
  assert.deepEqual(settled, ['A:true', 'B:true']);
  assert.equal(sent.length, 3, 'no further registration');
});

test('a request still waiting at shutdown settles with []', async () => {
  const { registrar, sent } = harness();
  const first = registrar.registerTopics(['A']);
  const second = registrar.registerTopics(['B']);
  const down = registrar.shutdown();
  sent[0]!.release(true);
  await down;
  assert.deepEqual(await first, [{ namesrvAddr: 'ns', ok: true }]);
  assert.deepEqual(await second, []);
  assert.equal(sent.length, 1);
});

test('after the broker id changed (controller-mode replica became master), a topic change registers in full, then increments again', async () => {
  const { registrar, sent, identity } = harness();
  identity.brokerId = 2;
  void registrar.registerNow();
  sent[0]!.release(true);
  await tick();
  await tick();
  identity.brokerId = 0; // elected: the nameservers know this broker as id 2 only
  void registrar.registerTopics(['A']);
  assert.deepEqual(sent.map((s) => [s.brokerId, s.topics]), [
    [2, ['A', 'B', 'C', 'D']],
    [0, ['A', 'B', 'C', 'D']],
  ], 'a one-topic registration as id 0 would be refused ("broker[0] has not registered")');
  sent[1]!.release(true);
  await tick();
  await tick();
  void registrar.registerTopics(['B']);
  assert.deepEqual(sent.map((s) => [s.brokerId, s.topics]).at(-1), [0, ['B']], 'registered as id 0 now: an increment');
  sent[2]!.release(true);
  await tick();
  assert.equal(sent.length, 3);
});
