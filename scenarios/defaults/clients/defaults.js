// defaults.js: Node's HTTP clients at their defaults, for
// ./run.sh client-defaults (scenarios/defaults). Usage:
//   node defaults.js MODE
// MODE: fetch | https-default | agent-false | agent-keepalive-false |
// agent-keepalive. The environment gives URL, TOKEN, PREFIX, CALLS and
// INFLIGHT (calls in flight at once, 1 = sequential); the lab CA comes from
// NODE_EXTRA_CA_CERTS. Every call POSTs a small JSON body with refkey
// PREFIX-<n> (also in X-Refkey, which nginx logs) and reads the whole
// answer. Prints one JSON line: per-call ms, wall ms, errors, versions,
// and undici's connect events (diagnostics_channel) when MODE is fetch.
'use strict';
const https = require('node:https');
const dc = require('node:diagnostics_channel');

const mode = process.argv[2];
const url = process.env.URL;
const token = process.env.TOKEN;
const prefix = process.env.PREFIX;
const calls = Number(process.env.CALLS);
const inflight = Number(process.env.INFLIGHT || '1');

const connects = [];
let started = 0;
// undici publishes these channels (undici/docs/api/DiagnosticsChannel.md);
// each connect is recorded with the number of calls started before it.
for (const name of ['undici:client:connected', 'undici:client:connectError']) {
  dc.channel(name).subscribe((m) => {
    connects.push({ channel: name, after_calls_started: started, local_port: m.socket ? m.socket.localPort : 0 });
  });
}

function body(n) {
  return JSON.stringify({ refkey: `${prefix}-${n}`, to: '01000000000', template: 'defaults', text: 'client defaults' });
}
function headers(n, b) {
  return { 'Content-Type': 'application/json', Authorization: `Bearer ${token}`, 'X-Refkey': `${prefix}-${n}`, 'Content-Length': Buffer.byteLength(b) };
}

let agent;
if (mode === 'agent-keepalive-false') agent = new https.Agent({ keepAlive: false });
if (mode === 'agent-keepalive') agent = new https.Agent({ keepAlive: true });

function viaHttps(n) {
  const b = body(n);
  const opts = { method: 'POST', headers: headers(n, b) };
  if (mode === 'agent-false') opts.agent = false;
  else if (agent) opts.agent = agent;
  // https-default: no agent option, so https.globalAgent.
  return new Promise((resolve, reject) => {
    const req = https.request(url, opts, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(b);
  });
}

async function viaFetch(n) {
  const b = body(n);
  const res = await fetch(url, { method: 'POST', headers: headers(n, b), body: b });
  await res.text();
  if (res.status !== 200) throw new Error(`status ${res.status}`);
}

// undiciVersion is the undici behind fetch: Node's bundled copy
// (process.versions.undici), or Debian's node-undici package, which
// Debian's nodejs uses instead (/usr/share/nodejs/undici).
function undiciVersion() {
  if (process.versions.undici) return process.versions.undici;
  try {
    return `${require('/usr/share/nodejs/undici/package.json').version} (Debian's node-undici)`;
  } catch (e) {
    return 'unknown';
  }
}

async function main() {
  const call = mode === 'fetch' ? viaFetch : viaHttps;
  if (!['fetch', 'https-default', 'agent-false', 'agent-keepalive-false', 'agent-keepalive'].includes(mode)) {
    throw new Error(`unknown mode ${mode}`);
  }
  const ms = new Array(calls).fill(-1);
  let errors = 0;
  let firstError = '';
  let next = 0;
  const t0 = process.hrtime.bigint();
  async function lane() {
    while (next < calls) {
      const n = ++next;
      started++;
      const s = process.hrtime.bigint();
      try {
        await call(n);
        ms[n - 1] = Number(process.hrtime.bigint() - s) / 1e6;
      } catch (e) {
        errors++;
        if (!firstError) firstError = String(e && (e.cause || e));
      }
    }
  }
  await Promise.all(Array.from({ length: inflight }, lane));
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  const out = {
    ms: ms.filter((v) => v >= 0), wall_ms: wall, errors, first_error: firstError,
    version: `node ${process.version}, undici ${undiciVersion()}, https.globalAgent.keepAlive=${https.globalAgent.keepAlive}`,
  };
  if (mode === 'fetch') out.connects = connects;
  process.stdout.write(JSON.stringify(out) + '\n');
  if (agent) agent.destroy();
}
main().catch((e) => { process.stderr.write(String(e && e.stack) + '\n'); process.exit(1); });
