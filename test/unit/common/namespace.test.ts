/**
 * Namespace names as Apache's NamespaceUtil builds and splits them (`ns%name`, retry/DLQ prefix in
 * front, system topics and groups untouched, an already wrapped name kept).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { namespaceOf, withoutNamespace, wrapNamespace } from '../../../src/common/message/namespace.js';

describe('resource namespaces (Apache NamespaceUtil)', () => {
  it('wrapNamespace: ns%name, prefix kept in front, no double wrap, system names and empty parts unchanged', () => {
    assert.equal(wrapNamespace('ns1', 'orders'), 'ns1%orders');
    assert.equal(wrapNamespace('ns1', '%RETRY%billing'), '%RETRY%ns1%billing');
    assert.equal(wrapNamespace('ns1', '%DLQ%billing'), '%DLQ%ns1%billing');
    assert.equal(wrapNamespace('ns1', 'ns1%orders'), 'ns1%orders');
    assert.equal(wrapNamespace('ns1', '%RETRY%ns1%billing'), '%RETRY%ns1%billing');
    assert.equal(wrapNamespace('ns1', 'TBW102'), 'TBW102');
    assert.equal(wrapNamespace('ns1', 'rmq_sys_wheel_timer'), 'rmq_sys_wheel_timer');
    assert.equal(wrapNamespace('ns1', 'CID_RMQ_SYS_TRANS'), 'CID_RMQ_SYS_TRANS');
    assert.equal(wrapNamespace('', 'orders'), 'orders');
    assert.equal(wrapNamespace('ns1', ''), '');
  });

  it('namespaceOf / withoutNamespace split a wrapped name back; plain names have namespace ""', () => {
    assert.deepEqual([namespaceOf('ns1%orders'), withoutNamespace('ns1%orders')], ['ns1', 'orders']);
    assert.deepEqual([namespaceOf('%RETRY%ns1%g'), withoutNamespace('%RETRY%ns1%g')], ['ns1', '%RETRY%g']);
    assert.deepEqual([namespaceOf('%DLQ%ns1%g'), withoutNamespace('%DLQ%ns1%g')], ['ns1', '%DLQ%g']);
    assert.deepEqual([namespaceOf('orders'), withoutNamespace('orders')], ['', 'orders']);
    assert.deepEqual([namespaceOf('%RETRY%g'), withoutNamespace('%RETRY%g')], ['', '%RETRY%g']);
    for (const n of ['orders', '%RETRY%billing', '%DLQ%x']) assert.equal(withoutNamespace(wrapNamespace('ns9', n)), n);
  });
});
