'use strict';
// The vendor client in five modes (CLIENT_MODE): three reproduce the Node
// client table of docs/studies.md#client-defaults, two are third-party
// libraries with their defaults (libclients.js: axios, got):
//   fetch                 Node's global fetch (undici's pool, keep-alive)
//   agent-nokeepalive     https.request with new https.Agent({keepAlive: false})
//   agent-keepalive       https.Agent({keepAlive: true}) closing idle
//                         connections after IDLE_TIMEOUT_MS
//   axios, got            the npm packages, each with its defaults
//   axios-fixed, got-fixed  the same with their documented fix: an
//                         https.Agent({keepAlive: true, timeout:
//                         CLIENT_IDLE_TIMEOUT_MS}) (libclients.js)
// request() answers {status, headers, body, trace} or throws an Error with
// .wroteRequest telling whether the request started to be written
// (docs/outcomes.md#reasons). Node never re-sends a POST by itself on these
// paths; nothing here retries.
const fs = require('fs');
const https = require('https');
const dc = require('diagnostics_channel');

const MODES = ['fetch', 'agent-nokeepalive', 'agent-keepalive', 'axios', 'got', 'axios-fixed', 'got-fixed'];
const tlsName = (p) => ({ 'TLSv1.2': '1.2', 'TLSv1.3': '1.3' }[p] || p || '');

function newTrace() {
  return { total_ms: 0, connect_ms: 0, tls_handshake_ms: 0, ttfb_ms: 0, reused: false, tls_version: '', got_conns: 0, wrote_request: false };
}

// traceSocket fills trace from a ClientRequest's socket: a reused socket
// (req.reusedSocket) or a new one with its connect and TLS handshake times.
// wrote_request turns true on a reused socket or once the handshake is
// done (Node flushes the request right after it).
// A request seen through http.client.request.start may hold its socket
// already (Node publishes it when the request is ended): then it is traced
// at once.
function traceSocket(req, trace, t0) {
  const onSocket = (sock) => {
    trace.got_conns++;
    if (req.reusedSocket) {
      trace.reused = true;
      trace.wrote_request = true;
      trace.tls_version = tlsName(sock.getProtocol && sock.getProtocol());
      return;
    }
    let tc = 0;
    sock.once('connect', () => { tc = performance.now(); trace.connect_ms = tc - t0; });
    sock.once('secureConnect', () => {
      trace.tls_handshake_ms = performance.now() - (tc || t0);
      trace.tls_version = tlsName(sock.getProtocol());
      trace.wrote_request = true;
    });
  };
  if (req.socket) onSocket(req.socket);
  else req.on('socket', onSocket);
}

// agentClient sends with https.request through one https.Agent.
function agentClient(cfg, keepAlive) {
  const tlsOpts = {};
  if (cfg.caFile) tlsOpts.ca = fs.readFileSync(cfg.caFile);
  if (cfg.clientCert) tlsOpts.cert = fs.readFileSync(cfg.clientCert);
  if (cfg.clientKey) tlsOpts.key = fs.readFileSync(cfg.clientKey);
  const agent = keepAlive
    ? new https.Agent({ keepAlive: true, maxSockets: 1, timeout: cfg.idleTimeoutMs, ...tlsOpts })
    : new https.Agent({ keepAlive: false, ...tlsOpts });
  const base = new URL(cfg.vendorURL);
  return {
    mode: keepAlive ? 'agent-keepalive' : 'agent-nokeepalive',
    request(method, path, headers, body) {
      const trace = newTrace();
      const t0 = performance.now();
      return new Promise((resolve, reject) => {
        let done = false;
        const fail = (err) => {
          if (done) return;
          done = true;
          trace.total_ms = performance.now() - t0;
          err.wroteRequest = trace.wrote_request;
          err.trace = trace;
          reject(err);
        };
        const req = https.request({
          protocol: 'https:', hostname: base.hostname, port: base.port || 443, path, method, agent,
          headers: { ...headers, 'Content-Length': Buffer.byteLength(body) },
        });
        const timer = setTimeout(() => req.destroy(Object.assign(new Error(`response timeout after ${cfg.responseTimeoutMs} ms`), { code: 'ETIMEDOUT' })), cfg.responseTimeoutMs);
        traceSocket(req, trace, t0);
        req.on('response', (res) => {
          trace.ttfb_ms = performance.now() - t0;
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            clearTimeout(timer);
            if (done) return;
            done = true;
            trace.total_ms = performance.now() - t0;
            resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), trace });
          });
          res.on('error', (e) => { clearTimeout(timer); fail(e); });
        });
        req.on('error', (e) => { clearTimeout(timer); fail(e); });
        req.end(body);
      });
    },
    close() { agent.destroy(); },
  };
}

// fetchClient sends with the global fetch. The run's CA reaches undici
// through NODE_EXTRA_CA_CERTS (set by the image's entrypoint from
// VENDOR_CA_FILE); a client certificate cannot be given to the global fetch
// without the undici package, so mTLS is refused in this mode. The trace
// comes from undici's diagnostics channels (concurrency 1: one send at a
// time, so the current trace is unambiguous).
function fetchClient(cfg) {
  if (cfg.clientCert) throw new Error('CLIENT_MODE=fetch cannot present a client certificate (mTLS): use an agent mode');
  let cur = null;
  const onConnected = ({ socket }) => {
    if (!cur) return;
    cur.connected = true;
    cur.trace.got_conns++;
    cur.trace.tls_version = tlsName(socket && socket.getProtocol && socket.getProtocol());
    cur.trace.connect_ms = performance.now() - cur.t0; // TCP + TLS: undici reports them together
  };
  const onSendHeaders = ({ socket }) => {
    if (!cur) return;
    cur.trace.wrote_request = true;
    if (!cur.connected) {
      cur.trace.reused = true;
      cur.trace.got_conns++;
      cur.trace.tls_version = tlsName(socket && socket.getProtocol && socket.getProtocol());
    }
  };
  dc.subscribe('undici:client:connected', onConnected);
  dc.subscribe('undici:client:sendHeaders', onSendHeaders);
  return {
    mode: 'fetch',
    async request(method, path, headers, body) {
      const trace = newTrace();
      cur = { trace, t0: performance.now(), connected: false };
      const t0 = cur.t0;
      try {
        const res = await fetch(new URL(path, cfg.vendorURL), {
          method, headers, body, signal: AbortSignal.timeout(cfg.responseTimeoutMs),
        });
        trace.ttfb_ms = performance.now() - t0;
        const text = await res.text();
        trace.total_ms = performance.now() - t0;
        return { status: res.status, headers: Object.fromEntries(res.headers), body: text, trace };
      } catch (e) {
        trace.total_ms = performance.now() - t0;
        const err = e.cause instanceof Error ? Object.assign(e.cause, { message: `${e.message}: ${e.cause.message}` }) : e;
        err.wroteRequest = trace.wrote_request;
        err.trace = trace;
        throw err;
      } finally {
        cur = null;
      }
    },
    close() {
      dc.unsubscribe('undici:client:connected', onConnected);
      dc.unsubscribe('undici:client:sendHeaders', onSendHeaders);
    },
  };
}

// newClient returns the client of cfg.clientMode. Throws on an unknown mode,
// naming the known ones.
function newClient(cfg) {
  switch (cfg.clientMode) {
    case 'axios': case 'axios-fixed': return require('./libclients').axiosClient(cfg, { newTrace, traceSocket });
    case 'got': case 'got-fixed': return require('./libclients').gotClient(cfg, { newTrace, traceSocket });
    case 'fetch': return fetchClient(cfg);
    case 'agent-nokeepalive': return agentClient(cfg, false);
    case 'agent-keepalive': return agentClient(cfg, true);
    default: throw new Error(`CLIENT_MODE ${JSON.stringify(cfg.clientMode)}: known modes: ${MODES.join(', ')}`);
  }
}

module.exports = { newClient, MODES, tlsName };
