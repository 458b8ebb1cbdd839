'use strict';
// Outcome classification of one send, following docs/outcomes.md and the
// status table format of docs/vendor-api.md#status-table. The outcome names
// are the project's vocabulary (worker/outcome); this file only spells them.

const SENT = 'SENT';
const REJECTED = 'REJECTED';
const NOT_SENT = 'NOT_SENT';
const UNKNOWN = 'UNKNOWN';
const OUTSIDE_SEND_WINDOW = 'OUTSIDE_SEND_WINDOW';
const INVALID = 'INVALID';
const DUPLICATE = 'DUPLICATE';
const ALL = [SENT, REJECTED, NOT_SENT, UNKNOWN, OUTSIDE_SEND_WINDOW, INVALID, DUPLICATE];
const TABLE_OUTCOMES = [REJECTED, NOT_SENT, UNKNOWN];

// defaultTable is the table of a vendor whose documentation says nothing
// more (docs/vendor-api.md#status-table): 429 and 408 NOT_SENT, other 4xx
// REJECTED, 5xx UNKNOWN.
function defaultTable() {
  return { success_code: '1000', statuses: { '429': NOT_SENT, '408': NOT_SENT, '4xx': REJECTED, '5xx': UNKNOWN }, codes: {} };
}

// parseTable reads a status table from JSON text ("" = defaultTable).
// Throws an Error naming the bad key and the allowed values.
function parseTable(text) {
  if (!text) return defaultTable();
  let t;
  try {
    t = JSON.parse(text);
  } catch (e) {
    throw new Error(`status table: not JSON: ${e.message}`);
  }
  const out = { success_code: String(t.success_code || ''), statuses: t.statuses || {}, codes: t.codes || {} };
  if (!out.success_code) throw new Error('status table: success_code is empty');
  for (const [where, m] of [['statuses', out.statuses], ['codes', out.codes]]) {
    for (const [k, v] of Object.entries(m)) {
      if (!TABLE_OUTCOMES.includes(v)) {
        throw new Error(`status table: ${where}.${k} = ${JSON.stringify(v)}; allowed: ${TABLE_OUTCOMES.join(', ')}`);
      }
      if (where === 'statuses' && !/^[1-5](\d\d|xx)$/.test(k)) {
        throw new Error(`status table: statuses key ${JSON.stringify(k)}; allowed: NNN or Nxx`);
      }
    }
  }
  return out;
}

// codeOf returns the business code of a JSON answer body at field, as a
// string, or null when the body does not parse or has no such field.
function codeOf(body, field) {
  try {
    const v = JSON.parse(body)[field];
    if (typeof v === 'string' || typeof v === 'number') return String(v);
  } catch (_) { /* not JSON */ }
  return null;
}

// classifyAnswer judges an HTTP answer in the status table's order: a code
// listed under codes; then a 2xx (success code SENT, other code REJECTED, no
// parsable code UNKNOWN); then statuses exact, then by class; else UNKNOWN.
// Returns {outcome, code} where code is the business code or the status.
function classifyAnswer(table, status, body, codeField) {
  const code = codeOf(body, codeField || 'code');
  if (code !== null && table.codes[code]) return { outcome: table.codes[code], code };
  if (status >= 200 && status < 300) {
    if (code === null) return { outcome: UNKNOWN, code: String(status) };
    return { outcome: code === table.success_code ? SENT : REJECTED, code };
  }
  const exact = table.statuses[String(status)];
  const cls = table.statuses[`${Math.floor(status / 100)}xx`];
  return { outcome: exact || cls || UNKNOWN, code: code !== null ? code : String(status) };
}

// classifyFailure judges a send that got no answer: NOT_SENT when the
// request provably never started to be written (DNS, connect, TLS, a token
// failure), UNKNOWN otherwise (docs/outcomes.md#reasons).
function classifyFailure(wroteRequest) {
  return wroteRequest ? UNKNOWN : NOT_SENT;
}

// retryAfterMs parses a Retry-After value (seconds or an HTTP date) into
// ms from nowMs; null when absent or unreadable.
function retryAfterMs(value, nowMs) {
  if (value == null || value === '') return null;
  const v = String(value).trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const t = Date.parse(v);
  if (Number.isNaN(t)) return null;
  return Math.max(0, t - nowMs);
}

// attemptOf reads the x-notifier-attempt header as publishers in every
// language send it (number, decimal string, Buffer); 0 when missing/bad.
function attemptOf(headers) {
  const v = headers && headers['x-notifier-attempt'];
  let n;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string' || Buffer.isBuffer(v)) n = Number(String(v).trim());
  else if (v && typeof v === 'object' && 'value' in v) n = Number(v.value);
  if (!Number.isInteger(n) || n < 0) return 0;
  return Math.min(n, 2147483647);
}

module.exports = {
  SENT, REJECTED, NOT_SENT, UNKNOWN, OUTSIDE_SEND_WINDOW, INVALID, DUPLICATE, ALL,
  defaultTable, parseTable, classifyAnswer, classifyFailure, retryAfterMs, attemptOf, codeOf,
};
