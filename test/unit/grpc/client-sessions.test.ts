/**
 * ClientSessions expiry: a session that had a Telemetry stream ends `streamLostExpireMs` after its
 * last stream closed (and no call since); one that never had a stream only after `expireMs` of
 * silence; a session with an open stream but silent for `expireMs` (half-open connection) ends
 * too and its streams are ended by the server; NotifyClientTermination (remove) ends it at once.
 * Every end is reported to onRemoved once.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ClientSessions, type TelemetryWriter } from '../../../src/grpc/client-sessions.js';

function stream(): TelemetryWriter & { close(): void; endedByServer: boolean } {
  let closed = false;
  const w = {
    endedByServer: false,
    write: () => !closed,
    get closed() {
      return closed;
    },
    close: () => void (closed = true),
    end: () => {
      w.endedByServer = true;
      closed = true;
    },
  };
  return w;
}

describe('ClientSessions expiry', () => {
  it('stream loss ends a streaming client after streamLostExpireMs; a stream-less one after expireMs', () => {
    let now = 0;
    const removed: string[] = [];
    const sessions = new ClientSessions(() => now, 120_000, (s) => removed.push(s.clientId), 5000);
    const w = stream();
    const s = sessions.addStream('push-1', w);
    sessions.touch('simple-no-stream');
    now = 60_000;
    assert.equal(sessions.expire(), 0, 'an open stream keeps a session silent for less than expireMs');
    w.close();
    sessions.streamClosed(s, w);
    now = 64_000;
    assert.equal(sessions.expire(), 0, '4 s after the stream closed');
    now = 65_001;
    assert.equal(sessions.expire(), 1);
    assert.deepEqual(removed, ['push-1']);
    assert.equal(sessions.get('push-1'), undefined);
    now = 120_000;
    assert.equal(sessions.expire(), 0, 'the stream-less session lives 120 s');
    now = 120_001;
    assert.equal(sessions.expire(), 1);
    assert.deepEqual(removed, ['push-1', 'simple-no-stream']);
  });

  it('a call after the stream closed (the client reconnecting) restarts the stream-loss clock; remove() ends at once', () => {
    let now = 0;
    const removed: string[] = [];
    const sessions = new ClientSessions(() => now, 120_000, (s) => removed.push(s.clientId), 5000);
    const w = stream();
    const s = sessions.addStream('c', w);
    w.close();
    sessions.streamClosed(s, w);
    now = 4000;
    sessions.touch('c');
    now = 8000;
    assert.equal(sessions.expire(), 0);
    const w2 = stream();
    sessions.addStream('c', w2);
    now = 100_000;
    assert.equal(sessions.expire(), 0, 'the reopened stream keeps it');
    assert.equal(w2.endedByServer, false);
    sessions.remove('c');
    sessions.remove('c');
    assert.deepEqual(removed, ['c']);
  });

  it('an open stream on a half-open connection does not keep a silent session: it ends after expireMs (Apache channelExpiredTimeout), the stream is ended', () => {
    let now = 0;
    const removed: string[] = [];
    const sessions = new ClientSessions(() => now, 120_000, (s) => removed.push(s.clientId), 5000);
    const quiet = stream();
    const live = stream();
    sessions.addStream('half-open', quiet);
    sessions.addStream('heartbeating', live);
    for (now = 10_000; now <= 120_000; now += 10_000) {
      sessions.touch('heartbeating');
      assert.equal(sessions.expire(), 0, `at ${now} ms`);
    }
    now = 120_001;
    assert.equal(sessions.expire(), 1);
    assert.deepEqual(removed, ['half-open']);
    assert.equal(quiet.endedByServer, true, 'the server ended the stream of the expired session');
    assert.equal(live.endedByServer, false);
    assert.ok(sessions.get('heartbeating'));
    assert.equal(sessions.get('half-open'), undefined);
  });
});
