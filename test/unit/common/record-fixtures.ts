// Shared fixtures for the common/message tests (not a test file itself).
import type { MessageInner } from '../../../src/common/message/message.js';
import { ipv4Address, socketAddressFromString } from '../../../src/common/message/msgid.js';

/** The ReputMessageServiceTest message: topic FooBar, 32-byte body, KEYS (13-digit millis) + TAGS TAG1. */
export function fooBarMessage(overrides: Partial<MessageInner> = {}): MessageInner {
  return {
    topic: 'FooBar',
    queueId: 0,
    flag: 0,
    body: Buffer.from('Once, there was a chance for me!'),
    properties: new Map([
      ['KEYS', '1700000000123'],
      ['TAGS', 'TAG1'],
    ]),
    sysFlag: 0,
    bornTimestamp: 1700000000000,
    bornHost: ipv4Address(127, 0, 0, 1, 50000),
    storeHost: ipv4Address(127, 0, 0, 1, 10911),
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
    ...overrides,
  };
}

export function ipv6Message(overrides: Partial<MessageInner> = {}): MessageInner {
  return fooBarMessage({
    bornHost: socketAddressFromString('[::1]:5000'),
    storeHost: socketAddressFromString('[::1]:10911'),
    ...overrides,
  });
}
