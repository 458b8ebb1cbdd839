'use strict';
// The attempt ledger: an append-only JSON Lines file, fsynced after every
// line, so an attempt is on disk before its request goes out
// (docs/outcomes.md#at-least-once-and-the-ledger). The last line of a
// refkey wins when the file is read back.
const fs = require('fs');
const crypto = require('crypto');
const { INVALID, DUPLICATE, UNKNOWN, NOT_SENT, OUTSIDE_SEND_WINDOW } = require('./classify');

const hashOf = (body) => crypto.createHash('sha256').update(body).digest('hex');

class Ledger {
  // path "" keeps the ledger in memory only (tests).
  constructor(path) {
    this.entries = new Map();
    this.fd = null;
    if (!path) return;
    if (fs.existsSync(path)) {
      for (const line of fs.readFileSync(path, 'utf8').split('\n')) {
        if (!line.trim()) continue;
        try {
          const e = JSON.parse(line);
          this.entries.set(e.refkey, e);
        } catch (_) { /* a torn last line: the attempt before it stands */ }
      }
    }
    this.fd = fs.openSync(path, 'a');
  }

  // decide returns null when refkey may be sent, else {outcome, reason}:
  // another body (REFKEY_CONFLICT, INVALID), a final outcome (DUPLICATE), or
  // an attempt without an outcome (UNKNOWN: it may have reached the vendor).
  decide(refkey, hash) {
    const e = this.entries.get(refkey);
    if (!e) return null;
    if (e.hash !== hash) return { outcome: INVALID, reason: 'REFKEY_CONFLICT' };
    if (e.outcome === null) return { outcome: UNKNOWN, reason: 'ATTEMPT_WITHOUT_OUTCOME' };
    if (e.outcome === NOT_SENT || e.outcome === OUTSIDE_SEND_WINDOW) return null;
    return { outcome: DUPLICATE, reason: 'ALREADY_' + e.outcome };
  }

  attempts(refkey) {
    const e = this.entries.get(refkey);
    return e ? e.attempts : 0;
  }

  // begin writes an attempt without outcome and fsyncs it.
  begin(refkey, hash) {
    const prev = this.entries.get(refkey);
    this.put({ refkey, hash, outcome: null, attempts: (prev ? prev.attempts : 0) + 1, at: new Date().toISOString() });
  }

  // finish writes the attempt's outcome and fsyncs it.
  finish(refkey, hash, outcome) {
    const prev = this.entries.get(refkey);
    this.put({ refkey, hash, outcome, attempts: prev ? prev.attempts : 0, at: new Date().toISOString() });
  }

  put(e) {
    if (this.fd !== null) {
      fs.writeSync(this.fd, JSON.stringify(e) + '\n');
      fs.fsyncSync(this.fd);
    }
    this.entries.set(e.refkey, e);
  }

  close() {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}

module.exports = { Ledger, hashOf };
