'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { record, Writer } = require('../src/records');
const { Ledger, hashOf } = require('../src/ledger');
const { untilOpen } = require('../src/window');
const { tokenOf } = require('../src/vendor');
const { queuesOf } = require('../src/worker');

test('record has the contract keys and types', () => {
  const r = record({ seq: 1, refkey: 'a', outcome: 'SENT', start: new Date(0), end: new Date(25), total_ms: 24.6, reused: true, tls_version: '1.3', replica: 'w1' });
  for (const k of ['refkey', 'outcome', 'start', 'end']) assert.ok(k in r, `missing ${k}`);
  assert.equal(r.start, '1970-01-01T00:00:00.000Z');
  assert.equal(typeof r.total_ms, 'number');
  assert.equal(r.reused, true);
  assert.equal(r.replica, 'w1');
  assert.ok(!('error' in r), 'empty optional fields are left out');
  assert.throws(() => record({ refkey: 'a', start: new Date() }), /outcome is required/);
});

test('Writer appends one JSON line per record', () => {
  const p = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rec-')), 'records.jsonl');
  const w = new Writer(p);
  w.write(record({ refkey: 'a', outcome: 'SENT', start: new Date(), end: new Date() }));
  w.write(record({ refkey: 'b', outcome: 'UNKNOWN', start: new Date(), end: new Date(), error: 'reset' }));
  w.close();
  const lines = fs.readFileSync(p, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((l) => [l.refkey, l.outcome]), [['a', 'SENT'], ['b', 'UNKNOWN']]);
});

test('ledger: duplicate, unknown after a crash, conflict, resend after NOT_SENT', () => {
  const p = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'led-')), 'ledger.jsonl');
  const h = hashOf(Buffer.from('body'));
  let l = new Ledger(p);
  assert.equal(l.decide('k', h), null);
  l.begin('k', h);
  l.close();
  l = new Ledger(p); // a crash between begin and finish
  assert.equal(l.decide('k', h).outcome, 'UNKNOWN');
  l.finish('k', h, 'SENT');
  assert.equal(l.decide('k', h).outcome, 'DUPLICATE');
  assert.equal(l.decide('k', hashOf(Buffer.from('other'))).reason, 'REFKEY_CONFLICT');
  l.begin('n', h);
  l.finish('n', h, 'NOT_SENT');
  assert.equal(l.decide('n', h), null, 'NOT_SENT may be sent again');
  assert.equal(l.attempts('n'), 1);
  l.close();
});

test('send window: inside, before, after (Asia/Seoul)', () => {
  const w = { start: '08:00', end: '20:50', zone: 'Asia/Seoul' };
  assert.equal(untilOpen(new Date('2026-11-30T12:00:00+09:00'), w), 0);
  assert.equal(untilOpen(new Date('2026-11-30T20:49:59+09:00'), w), 0);
  assert.equal(untilOpen(new Date('2026-11-30T20:50:00+09:00'), w), 11 * 3600e3 + 10 * 60e3);
  assert.equal(untilOpen(new Date('2026-11-30T07:59:30+09:00'), w), 30e3);
});

test('tokenOf reads the alimtalk and the OAuth2 shapes', () => {
  assert.deepEqual(tokenOf('{"accesstoken":"t","expired":"1970-01-01T00:00:10Z"}', 0), { token: 't', expiresAt: 10000 });
  assert.deepEqual(tokenOf('{"access_token":"u","token_type":"Bearer","expires_in":60}', 1000), { token: 'u', expiresAt: 61000 });
  assert.equal(tokenOf('{"error":"invalid_client"}', 0), null);
});

test('queues match the topology of worker/queues', () => {
  const q = Object.fromEntries(queuesOf({ queue: 'notifications', queueType: 'classic', singleActiveConsumer: true, retryMaxDelayMs: 300000 }));
  assert.deepEqual(q['notifications'], { 'x-queue-type': 'classic', 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'notifications.dead', 'x-single-active-consumer': true });
  assert.equal(q['notifications.retry']['x-message-ttl'], 300000);
  assert.equal(q['notifications.held']['x-dead-letter-routing-key'], 'notifications');
  assert.deepEqual(Object.keys(q).sort(), ['notifications', 'notifications.dead', 'notifications.failed', 'notifications.held', 'notifications.retry', 'notifications.unknown']);
});

test('quorum queues dead-letter at least once on every hop', () => {
  const q = Object.fromEntries(queuesOf({ queue: 'n', queueType: 'quorum', singleActiveConsumer: true, retryMaxDelayMs: 300000, deliveryLimit: 5 }));
  for (const name of ['n', 'n.retry', 'n.held']) {
    assert.equal(q[name]['x-dead-letter-strategy'], 'at-least-once', name);
    assert.equal(q[name]['x-overflow'], 'reject-publish', name);
  }
  for (const name of ['n.unknown', 'n.failed', 'n.dead']) assert.deepEqual(q[name], { 'x-queue-type': 'quorum' }, name);
});
