'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('fs');
const path = require('path');
const C = require('../src/classify');

// The alimtalk profile's table, as the lab passes it (JSON of status.yaml).
const alimtalk = C.parseTable(JSON.stringify({
  success_code: '1000',
  statuses: { '429': 'NOT_SENT', '408': 'NOT_SENT', '4xx': 'REJECTED', '5xx': 'UNKNOWN' },
  codes: { '4290': 'NOT_SENT' },
}));

test('classifyAnswer follows the status table order', async (t) => {
  const cases = [
    ['2xx success code', 200, '{"code":"1000"}', 'SENT', '1000'],
    ['2xx numeric success code', 200, '{"code":1000}', 'SENT', '1000'],
    ['2xx other business code', 200, '{"code":"3018"}', 'REJECTED', '3018'],
    ['2xx unparsable body', 200, 'oops', 'UNKNOWN', '200'],
    ['429 rate limited', 429, '{"code":"4290"}', 'NOT_SENT', '4290'],
    ['code wins over status', 500, '{"code":"4290"}', 'NOT_SENT', '4290'],
    ['408', 408, '', 'NOT_SENT', '408'],
    ['other 4xx', 400, '{"code":"3001"}', 'REJECTED', '3001'],
    ['502 from a proxy', 502, '<html>', 'UNKNOWN', '502'],
    ['503 undocumented', 503, '', 'UNKNOWN', '503'],
    ['3xx not in table', 302, '', 'UNKNOWN', '302'],
  ];
  for (const [name, status, body, want, code] of cases) {
    await t.test(name, () => {
      const got = C.classifyAnswer(alimtalk, status, body, 'code');
      assert.equal(got.outcome, want);
      assert.equal(got.code, code);
    });
  }
});

test('classifyAnswer reads the code from the profile field', () => {
  const sms = C.parseTable(JSON.stringify({ success_code: '0', statuses: { '4xx': 'REJECTED' } }));
  assert.equal(C.classifyAnswer(sms, 202, '{"result_code":"0"}', 'result_code').outcome, 'SENT');
  // negative control: the alimtalk field name finds no code, so a 2xx is UNKNOWN
  assert.equal(C.classifyAnswer(sms, 202, '{"result_code":"0"}', 'code').outcome, 'UNKNOWN');
});

test('classifyFailure: NOT_SENT only when nothing was written', () => {
  assert.equal(C.classifyFailure(false), 'NOT_SENT');
  assert.equal(C.classifyFailure(true), 'UNKNOWN');
});

test('parseTable refuses what the table format does not allow', async (t) => {
  for (const [name, text, want] of [
    ['bad outcome', '{"success_code":"1","statuses":{"429":"SENT"}}', /allowed: REJECTED, NOT_SENT, UNKNOWN/],
    ['bad status key', '{"success_code":"1","statuses":{"4x":"REJECTED"}}', /NNN or Nxx/],
    ['no success code', '{"statuses":{}}', /success_code is empty/],
    ['not JSON', '{', /not JSON/],
  ]) {
    await t.test(name, () => assert.throws(() => C.parseTable(text), want));
  }
  assert.deepEqual(C.parseTable('').statuses['429'], 'NOT_SENT');
});

test('retryAfterMs reads seconds and HTTP dates', () => {
  assert.equal(C.retryAfterMs('2', 0), 2000);
  assert.equal(C.retryAfterMs(new Date(10000).toUTCString(), 4000), 6000);
  assert.equal(C.retryAfterMs('soon', 0), null);
  assert.equal(C.retryAfterMs(undefined, 0), null);
});

test('attemptOf reads the header as other publishers send it', () => {
  assert.equal(C.attemptOf({ 'x-notifier-attempt': 4 }), 4);
  assert.equal(C.attemptOf({ 'x-notifier-attempt': '3' }), 3);
  assert.equal(C.attemptOf({ 'x-notifier-attempt': -1 }), 0);
  assert.equal(C.attemptOf({}), 0);
  assert.equal(C.attemptOf(undefined), 0);
});

test('outcome names match worker/outcome', () => {
  const src = fs.readFileSync(path.join(__dirname, '../../../worker/outcome/outcome.go'), 'utf8');
  for (const o of C.ALL) assert.match(src, new RegExp(`Outcome = "${o}"`), `${o} is not in worker/outcome`);
});

test('the third-party modes refuse mutual TLS before loading their package', () => {
  const { newClient, MODES } = require('../src/client');
  for (const mode of ['axios', 'got', 'axios-fixed', 'got-fixed']) {
    assert.ok(MODES.includes(mode), mode);
    assert.throws(() => newClient({ clientMode: mode, clientCert: '/lab/client.pem' }), /cannot present a client certificate/);
  }
  assert.throws(() => newClient({ clientMode: 'curl' }), /known modes: fetch, agent-nokeepalive, agent-keepalive, axios, got, axios-fixed, got-fixed/);
});

test('the fixed modes: a keep-alive agent with CLIENT_IDLE_TIMEOUT_MS, required', () => {
  const { fixedAgent } = require('../src/libclients');
  const { load } = require('../src/config');
  const env = { VENDOR_URL: 'https://x', VENDOR_CLIENT_ID: 'i', VENDOR_CLIENT_SECRET: 's', LEDGER: 'l' };
  for (const mode of ['axios-fixed', 'got-fixed']) {
    assert.throws(() => load({ ...env, CLIENT_MODE: mode }), /CLIENT_IDLE_TIMEOUT_MS/);
    const cfg = load({ ...env, CLIENT_MODE: mode, CLIENT_IDLE_TIMEOUT_MS: '74000' });
    const a = fixedAgent(cfg);
    assert.equal(a.keepAlive, true);
    assert.equal(a.options.timeout, 74000);
    a.destroy();
  }
  for (const mode of ['axios', 'got']) assert.equal(fixedAgent(load({ ...env, CLIENT_MODE: mode })), null, `${mode} keeps its default agent`);
});

test('a fixed agent closes a connection idle CLIENT_IDLE_TIMEOUT_MS and reuses a younger one', async () => {
  // The same options on http.Agent (https.Agent extends it and shares its
  // free-socket timeout), against a local keep-alive server.
  const http = require('http');
  let conns = 0;
  const srv = http.createServer({ keepAliveTimeout: 10000 }, (req, res) => { req.resume(); req.on('end', () => res.end('{}')); });
  srv.on('connection', () => conns++);
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const agent = new http.Agent({ keepAlive: true, timeout: 200 });
  const get = () => new Promise((resolve, reject) => {
    http.request({ host: '127.0.0.1', port: srv.address().port, method: 'POST', agent }, (res) => { res.resume(); res.on('end', resolve); })
      .on('error', reject).end('{}');
  });
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  await get(); await sleep(50); await get();
  assert.equal(conns, 1, 'reused within the idle timeout');
  await sleep(400); await get();
  assert.equal(conns, 2, 'a new connection after a pause above the idle timeout');
  agent.destroy(); srv.close();
});
