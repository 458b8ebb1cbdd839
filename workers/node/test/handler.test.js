'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const C = require('../src/classify');
const { Ledger, hashOf } = require('../src/ledger');
const { newHandler } = require('../src/worker');
const { record } = require('../src/records');

// An ad is checked against the send window again after the ledger's begin:
// a begin that takes the lab clock past 20:50 (Asia/Seoul) holds it.
const AD = Buffer.from(JSON.stringify({ refkey: 'ad-1', category: 'ad', recipient: 'r', template_code: 't', text: 'x' }));

async function handleWithBegin(beginMs) {
  let now = Date.parse('2026-11-30T20:49:59.998+09:00');
  const sent = [];
  class SlowBegin extends Ledger {
    begin(refkey, hash) {
      super.begin(refkey, hash);
      now += beginMs;
    }
  }
  const ledger = new SlowBegin('');
  const vendor = {
    send: async (msg) => {
      sent.push([msg.refkey, new Date(now)]);
      return { outcome: C.SENT, code: '1000', error: null, trace: {}, tokenFetched: false };
    },
  };
  const cfg = { queue: 'q', workerID: 't', maxAttempts: 5, retryDelayMs: 1, retryMaxDelayMs: 1,
    window: { start: '08:00', end: '20:50', zone: 'Asia/Seoul' } };
  let seq = 0;
  const handle = newHandler({ cfg, ledger, vendor, clock: () => new Date(now), nextSeq: () => ++seq });
  const r = await handle({ content: AD, fields: { redelivered: false }, properties: { headers: {} } });
  return { r, sent, ledger };
}

test('an ad whose begin crosses 20:50 is held, not sent', async () => {
  const { r, sent, ledger } = await handleWithBegin(5);
  assert.deepEqual(sent, [], 'an ad was sent after 20:50');
  assert.equal(r.outcome, C.OUTSIDE_SEND_WINDOW);
  assert.equal(r.queue, 'q.held');
  assert.equal(r.route.reason, 'OUTSIDE_SEND_WINDOW');
  assert.ok(r.route.expirationMs > 0);
  assert.equal(r.clock.toISOString(), '2026-11-30T11:50:00.003Z', 'the record keeps the re-check\'s clock');
  assert.equal(ledger.decide('ad-1', hashOf(AD)), null, 'sent later, once the window opens');
});

test('an ad whose begin ends inside the window is sent', async () => {
  const { r, sent } = await handleWithBegin(1);
  assert.deepEqual(sent.map(([k]) => k), ['ad-1']);
  assert.equal(r.outcome, C.SENT);
  assert.equal(r.route, null);
});

// A delivery whose refkey has an attempt without outcome in the ledger ends
// UNKNOWN without a call, and its record says no_call; a sent one's does not.
const INFO = Buffer.from(JSON.stringify({ refkey: 'k-1', category: 'info', recipient: 'r', template_code: 't', text: 'x' }));

function infoHandler(ledger, calls) {
  const vendor = {
    send: async (msg) => {
      calls.push(msg.refkey);
      return { outcome: C.SENT, code: '1000', error: null, trace: {}, tokenFetched: false };
    },
  };
  const cfg = { queue: 'q', workerID: 't', maxAttempts: 5, retryDelayMs: 1, retryMaxDelayMs: 1,
    window: { start: '00:00', end: '23:59', zone: 'UTC' } };
  let seq = 0;
  return newHandler({ cfg, ledger, vendor, clock: () => new Date('2026-11-30T12:00:00Z'), nextSeq: () => ++seq });
}

test('an UNKNOWN decided from the ledger is marked no_call', async () => {
  const ledger = new Ledger('');
  ledger.begin('k-1', hashOf(INFO)); // an attempt that never finished
  const calls = [];
  const r = await infoHandler(ledger, calls)({ content: INFO, fields: { redelivered: true }, properties: { headers: {} } });
  assert.equal(r.outcome, C.UNKNOWN);
  assert.deepEqual(calls, []);
  assert.equal(record({ ...r, end: r.start }).no_call, true);
});

test('a sent record has no no_call', async () => {
  const calls = [];
  const r = await infoHandler(new Ledger(''), calls)({ content: INFO, fields: { redelivered: false }, properties: { headers: {} } });
  assert.equal(r.outcome, C.SENT);
  assert.deepEqual(calls, ['k-1']);
  assert.equal('no_call' in record({ ...r, end: r.start }), false);
});
