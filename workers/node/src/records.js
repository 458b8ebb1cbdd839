'use strict';
// The records file: one JSON line per handled message, keys of
// worker/records.Record (docs/worker-contract.md#records).
const fs = require('fs');

const round = (ms) => Math.round(ms * 1000) / 1000;

// record builds one records line object. Required: refkey, outcome, start,
// end (Date). Optional fields are copied when given; phase times in ms.
function record(f) {
  for (const k of ['outcome', 'start', 'end']) {
    if (f[k] == null) throw new Error(`record: ${k} is required`);
  }
  const r = {
    seq: f.seq || 0,
    refkey: f.refkey || '',
    outcome: f.outcome,
    queue: f.queue || '',
    redelivered: !!f.redelivered,
    start: f.start.toISOString(),
    end: f.end.toISOString(),
    total_ms: round(f.total_ms || 0),
    connect_ms: round(f.connect_ms || 0),
    tls_handshake_ms: round(f.tls_handshake_ms || 0),
    ttfb_ms: round(f.ttfb_ms || 0),
    reused: !!f.reused,
    tls_version: f.tls_version || '',
    got_conns: f.got_conns || 0,
    cpu_ms: round(f.cpu_ms || 0),
    send_cpu_ms: round(f.send_cpu_ms || 0),
  };
  for (const k of ['error', 'code', 'replica', 'category']) if (f[k]) r[k] = f[k];
  if (f.attempt) r.attempt = f.attempt;
  if (f.clock) r.clock = f.clock.toISOString();
  if (f.held_until) r.held_until = f.held_until.toISOString();
  if (f.token_fetched) r.token_fetched = true;
  if (f.wrote_request) r.wrote_request = true;
  if (f.no_call) r.no_call = true;
  return r;
}

// Writer appends records to a file, one write per line.
class Writer {
  constructor(path) {
    this.fd = path ? fs.openSync(path, 'a') : null;
  }
  write(rec) {
    if (this.fd === null) return;
    fs.writeSync(this.fd, JSON.stringify(rec) + '\n');
  }
  close() {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}

// cpuMs is the process's cumulative user+sys CPU, ms.
function cpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

module.exports = { record, Writer, cpuMs };
