'use strict';
// The vendor API over a client (client.js): the token call (Basic or OAuth2
// client credentials, VENDOR_TOKEN_AUTH) and the send, judged with the
// status table (docs/vendor-api.md, docs/worker-contract.md).
const { classifyAnswer, classifyFailure, retryAfterMs, NOT_SENT, REJECTED } = require('./classify');

const REFRESH_MARGIN_MS = 60000;

// tokenOf reads a token answer: {"accesstoken","expired"} (alimtalk) or
// OAuth2's {"access_token","expires_in"}. Returns {token, expiresAt} or null.
function tokenOf(body, nowMs) {
  let t;
  try { t = JSON.parse(body); } catch (_) { return null; }
  const token = t.accesstoken || t.access_token;
  if (typeof token !== 'string' || !token) return null;
  let expiresAt = nowMs + 3600e3;
  if (typeof t.expired === 'string' && !Number.isNaN(Date.parse(t.expired))) expiresAt = Date.parse(t.expired);
  else if (Number.isFinite(Number(t.expires_in))) expiresAt = nowMs + Number(t.expires_in) * 1000;
  return { token, expiresAt };
}

class Vendor {
  constructor(cfg, client, table) {
    this.cfg = cfg;
    this.client = client;
    this.table = table;
    this.tok = null;
  }

  async fetchToken() {
    const c = this.cfg;
    let headers;
    let body;
    if (c.tokenAuth === 'form') {
      headers = { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' };
      body = new URLSearchParams({ grant_type: 'client_credentials', client_id: c.clientID, client_secret: c.clientSecret }).toString();
    } else {
      headers = { Authorization: 'Basic ' + Buffer.from(`${c.clientID}:${c.clientSecret}`).toString('base64'), Accept: 'application/json' };
      body = '';
    }
    const res = await this.client.request('POST', c.tokenPath, headers, body);
    const tok = res.status === 200 ? tokenOf(res.body, Date.now()) : null;
    if (!tok) throw Object.assign(new Error(`token call answered ${res.status}`), { status: res.status });
    const margin = Math.min(REFRESH_MARGIN_MS, (tok.expiresAt - Date.now()) / 10);
    this.tok = { token: tok.token, refreshAt: tok.expiresAt - margin };
  }

  // send POSTs one message and returns {outcome, code, error, retryAfterMs,
  // trace, tokenFetched}. It never throws: every failure is an outcome.
  async send(msg) {
    const c = this.cfg;
    let tokenFetched = false;
    const body = JSON.stringify({
      [c.refkeyField]: msg.refkey, recipient: msg.recipient, template_code: msg.template_code, text: msg.text, category: msg.category,
    });
    for (let tries = 0; ; tries++) {
      if (!this.tok || Date.now() >= this.tok.refreshAt) {
        try {
          await this.fetchToken();
          tokenFetched = true;
        } catch (e) {
          // No send was attempted: provably not sent.
          return { outcome: NOT_SENT, code: e.status ? String(e.status) : '', error: 'token: ' + e.message, trace: e.trace || {}, tokenFetched: true };
        }
      }
      const headers = { 'Content-Type': 'application/json', Authorization: 'Bearer ' + this.tok.token };
      if (c.correlationHeader) headers[c.correlationHeader] = msg.refkey;
      let res;
      try {
        res = await this.client.request('POST', c.sendPath, headers, body);
      } catch (e) {
        return { outcome: classifyFailure(e.wroteRequest), code: '', error: `${e.code || 'error'}: ${e.message}`, trace: e.trace || {}, tokenFetched };
      }
      if (res.status === 401 && tries === 0) {
        this.tok = null; // refused before processing: one new token, one more try
        continue;
      }
      const j = classifyAnswer(this.table, res.status, res.body, c.codeField);
      if (res.status === 401) j.outcome = REJECTED;
      const ra = retryAfterMs(res.headers['retry-after'], Date.now());
      return {
        outcome: j.outcome, code: j.code, error: j.outcome === 'SENT' ? '' : `status ${res.status}`,
        retryAfterMs: ra, trace: res.trace, tokenFetched,
      };
    }
  }
}

module.exports = { Vendor, tokenOf };
