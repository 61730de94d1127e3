/**
 * Signatures of ACL 2.0 against values computed independently (Python hmac/hashlib):
 *   Base64(HmacSHA1("sk1", "alice" + "PG" + "0" + "T1" + "hello")) = 1q42iGIE9gOFwhuJzvrJqwwxtxQ=
 *   hex(HmacSHA1("sk1", "20240102T030405Z")) = 98ae5f616e4d0c394a39d7986917e90944b28995
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  grpcAuthorization,
  grpcDateTime,
  remotingSignContent,
  signRemotingCommand,
  hmacSha1Base64,
} from '../../../src/auth/acl-signature.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';

describe('remoting signature (AclClientRPCHook)', () => {
  it('covers the extField values in key order (Signature excluded) followed by the body', () => {
    const ext = { topic: 'T1', AccessKey: 'alice', producerGroup: 'PG', queueId: '0', Signature: 'ignored' };
    const content = remotingSignContent(ext, Buffer.from('hello'), 401);
    assert.equal(content.toString(), 'alicePG0T1hello');
    assert.equal(hmacSha1Base64(content, 'sk1'), '1q42iGIE9gOFwhuJzvrJqwwxtxQ=');
  });

  it('signRemotingCommand adds AccessKey and Signature the way the Java hook does', () => {
    const cmd = createRequestCommand(10, { topic: 'T1', producerGroup: 'PG', queueId: '0' }, Buffer.from('hello'));
    signRemotingCommand(cmd, { accessKey: 'alice', secretKey: 'sk1' });
    assert.equal(cmd.extFields!.AccessKey, 'alice');
    assert.equal(cmd.extFields!.Signature, '1q42iGIE9gOFwhuJzvrJqwwxtxQ=');
  });

  it('numbers and booleans (ali-ons JSON) are signed in their text form', () => {
    assert.equal(remotingSignContent({ b: 7, a: true, c: 'x' }, null, 401).toString(), 'true7x');
  });

  it('leaves _UNIQUE_KEY_QUERY out only for clients up to V4_9_3 (version 400)', () => {
    const ext = { AccessKey: 'a', _UNIQUE_KEY_QUERY: 'true' };
    assert.equal(remotingSignContent(ext, null, 400).toString(), 'a');
    assert.equal(remotingSignContent(ext, null, 401).toString(), 'atrue');
  });

  it('keys sort by UTF-16 code unit like Java TreeMap (uppercase before lowercase)', () => {
    assert.equal(remotingSignContent({ b: '2', B: '1', a: '3' }, null, 401).toString(), '132');
  });
});

describe('gRPC signature (rocketmq-clients MQv2-HMAC-SHA1)', () => {
  it('formats x-mq-date-time and the authorization value', () => {
    const dt = grpcDateTime(new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 678)));
    assert.equal(dt, '20240102T030405Z');
    assert.equal(
      grpcAuthorization({ accessKey: 'alice', secretKey: 'sk1' }, dt),
      'MQv2-HMAC-SHA1 Credential=alice, SignedHeaders=x-mq-date-time, Signature=98ae5f616e4d0c394a39d7986917e90944b28995',
    );
  });
});
