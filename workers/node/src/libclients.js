'use strict';
// Third-party HTTP clients from npm, each with its defaults
// (workers/node/README.md says which defaults matter and where they are
// documented):
//   axios  axios.post with the default instance: Node's https.globalAgent
//          (Node 18: keepAlive false, so a new connection per request),
//          no timeout unless given, no retry
//   got    got.post (got 13, ESM, loaded with import()): Node's
//          https.globalAgent too, retry.limit 2 but only for GET, PUT, HEAD,
//          DELETE, OPTIONS and TRACE (never POST)
//   axios-fixed, got-fixed  the same with the one-line fix of their notes
//          (README.md, "Fixed variants"): a keep-alive agent that closes a
//          connection idle CLIENT_IDLE_TIMEOUT_MS (fixedAgent), given as
//          axios.create({httpsAgent}) and got.extend({agent: {https}});
//          nothing else changes
// The harness passes only what the contract asks for: the response timeout
// (axios `timeout`, got `timeout.request`) and the body as text. The run's
// CA reaches both through NODE_EXTRA_CA_CERTS (entrypoint.sh), added to
// Node's bundled roots; with the global agent neither can present a client
// certificate, so mutual TLS is refused (as for fetch). A 4xx/5xx answer,
// which both throw by default, is read from the error's response.
//
// Each ClientRequest the library makes during a send is seen through Node's
// diagnostics channel http.client.request.start (present in Node 18.20,
// the image's) and traced like the agent modes; one send at a time, so every
// request started during a call belongs to it. got_conns above 1 for one
// call means the library made a second request on its own.
const dc = require('diagnostics_channel');

function tracer(t) {
  let cur = null;
  const onStart = ({ request }) => {
    if (!cur) return;
    cur.requests++;
    t.traceSocket(request, cur.trace, cur.t0);
  };
  const ch = dc.channel('http.client.request.start'); // held here: a channel nobody holds may be collected
  ch.subscribe(onStart);
  return {
    async call(fn) {
      const trace = t.newTrace();
      cur = { trace, t0: performance.now(), requests: 0 };
      const t0 = cur.t0;
      try {
        const res = await fn();
        trace.total_ms = performance.now() - t0;
        return { ...res, trace };
      } catch (e) {
        trace.total_ms = performance.now() - t0;
        e.wroteRequest = trace.wrote_request;
        e.trace = trace;
        throw e;
      } finally {
        cur = null;
      }
    },
    close() { ch.unsubscribe(onStart); },
  };
}

// fixedAgent is the agent of the fixed modes: Node's https.Agent with
// keepAlive true and timeout = CLIENT_IDLE_TIMEOUT_MS (Node's docs: the
// socket timeout, which the agent also sets on a free socket and destroys
// it when it fires), the rest Node's defaults. null for a default mode.
function fixedAgent(cfg) {
  if (!/-fixed$/.test(cfg.clientMode)) return null;
  if (!(cfg.clientIdleTimeoutMs > 0)) throw new Error(`CLIENT_MODE=${cfg.clientMode} needs CLIENT_IDLE_TIMEOUT_MS`);
  return new (require('https').Agent)({ keepAlive: true, timeout: cfg.clientIdleTimeoutMs });
}

function noMTLS(cfg, mode) {
  if (cfg.clientCert) throw new Error(`CLIENT_MODE=${mode} with its default agent cannot present a client certificate (mTLS): use an agent mode`);
}

function axiosClient(cfg, t) {
  noMTLS(cfg, cfg.clientMode);
  const agent = fixedAgent(cfg);
  const axios = require('axios');
  const inst = agent ? axios.create({ httpsAgent: agent }) : axios;
  const tr = tracer(t);
  return {
    mode: cfg.clientMode,
    version: axios.VERSION,
    request(method, path, headers, body) {
      return tr.call(async () => {
        let res;
        try {
          res = await inst.request({
            method, url: new URL(path, cfg.vendorURL).toString(), headers, data: body,
            timeout: cfg.responseTimeoutMs, responseType: 'text',
          });
        } catch (e) {
          if (!e.response) throw e;
          res = e.response; // a 4xx or 5xx answer
        }
        return { status: res.status, headers: lower(res.headers), body: typeof res.data === 'string' ? res.data : JSON.stringify(res.data) };
      });
    },
    close() { tr.close(); if (agent) agent.destroy(); },
  };
}

function gotClient(cfg, t) {
  noMTLS(cfg, cfg.clientMode);
  const agent = fixedAgent(cfg);
  const tr = tracer(t);
  let got = null;
  return {
    mode: cfg.clientMode,
    request(method, path, headers, body) {
      return tr.call(async () => {
        if (!got) {
          got = (await import('got')).default; // got >= 12 is ESM only
          if (agent) got = got.extend({ agent: { https: agent } });
        }
        let res;
        try {
          res = await got(new URL(path, cfg.vendorURL), { method, headers, body, timeout: { request: cfg.responseTimeoutMs } });
        } catch (e) {
          if (!e.response || e.name !== 'HTTPError') throw e;
          res = e.response; // a 4xx or 5xx answer
        }
        return { status: res.statusCode, headers: lower(res.headers), body: String(res.body) };
      });
    },
    close() { tr.close(); if (agent) agent.destroy(); },
  };
}

function lower(h) {
  const out = {};
  for (const [k, v] of Object.entries(h || {})) out[k.toLowerCase()] = v;
  return out;
}

module.exports = { axiosClient, gotClient, fixedAgent };
