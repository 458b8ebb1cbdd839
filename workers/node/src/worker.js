'use strict';
// The consumer: one message at a time (prefetch 1), the delivery rules of
// docs/outcomes.md, routing and headers of docs/worker-contract.md#queues.
const C = require('./classify');
const { decode } = require('./message');
const { Ledger, hashOf } = require('./ledger');
const { untilOpen } = require('./window');
const { record, Writer, cpuMs } = require('./records');
const { Vendor } = require('./vendor');
const { newClient } = require('./client');
const { redact } = require('./config');
const { Intake } = require('./intake');

// queuesOf returns the six queues and their arguments: the same topology
// the lab's driver declares (worker/queues).
function queuesOf(c) {
  const plain = () => ({ 'x-queue-type': c.queueType });
  // Quorum queues dead-letter at least once (RabbitMQ 3.10+; it needs x-overflow reject-publish).
  const safe = c.queueType === 'quorum' ? { 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' } : {};
  const to = (target) => ({ ...plain(), 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': target, ...safe });
  const main = to(c.queue + '.dead');
  if (c.singleActiveConsumer) main['x-single-active-consumer'] = true;
  if (c.queueType === 'quorum') main['x-delivery-limit'] = c.deliveryLimit;
  return [
    [c.queue, main],
    [c.queue + '.retry', { ...to(c.queue), 'x-message-ttl': c.retryMaxDelayMs }],
    [c.queue + '.unknown', plain()],
    [c.queue + '.held', to(c.queue)],
    [c.queue + '.failed', plain()],
    [c.queue + '.dead', plain()],
  ];
}

const log = (level, msg, attrs) => process.stderr.write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...attrs }) + '\n');

// newHandler returns handle(delivery): the record fields of one delivery and
// its route (null: ack only; else the queue to re-publish to, its reason,
// attempt and expiration). It sends nothing outside the send window: an ad
// is checked before the ledger's begin and again right before the request.
function newHandler({ cfg, ledger, vendor, clock, nextSeq }) {
  // heldIfClosed: the held record of an ad when the window is closed at now
  // (the lab clock), else null.
  const heldIfClosed = (msg, r, now) => {
    if (msg.category !== 'ad') return null;
    const wait = untilOpen(now, cfg.window);
    if (wait <= 0) return null;
    return { ...r, clock: now, outcome: C.OUTSIDE_SEND_WINDOW, queue: cfg.queue + '.held', held_until: new Date(now.getTime() + wait),
      route: { reason: 'OUTSIDE_SEND_WINDOW', expirationMs: wait } };
  };
  return async (d) => {
    const start = new Date();
    const now = clock();
    const r = { seq: nextSeq(), start, redelivered: d.fields.redelivered, replica: cfg.workerID, clock: now };
    const headers = d.properties.headers || {};
    let msg;
    try {
      msg = decode(d.content);
    } catch (e) {
      return { ...r, refkey: e.refkey || '', outcome: C.INVALID, error: e.message, queue: cfg.queue + '.dead',
        route: { reason: e.message } };
    }
    r.refkey = msg.refkey;
    r.category = msg.category;
    const before = heldIfClosed(msg, r, now);
    if (before) return before;
    const hash = hashOf(d.content);
    const prior = ledger.decide(msg.refkey, hash);
    if (prior) {
      const q = { [C.INVALID]: '.dead', [C.UNKNOWN]: '.unknown', [C.DUPLICATE]: null }[prior.outcome];
      if (prior.outcome === C.UNKNOWN) ledger.finish(msg.refkey, hash, C.UNKNOWN);
      // An UNKNOWN decided here is not a call to the client (no_call).
      const noCall = prior.outcome === C.UNKNOWN;
      return { ...r, outcome: prior.outcome, error: prior.reason, queue: q ? cfg.queue + q : '', route: q ? { reason: prior.reason } : null, no_call: noCall };
    }
    ledger.begin(msg.refkey, hash); // fsynced before the request goes out
    // The last look before the request: the begin (an fsync) may have taken
    // the clock past the window's end. A hold then closes the attempt as
    // OUTSIDE_SEND_WINDOW, which the ledger lets send again.
    const held = heldIfClosed(msg, r, clock());
    if (held) {
      ledger.finish(msg.refkey, hash, C.OUTSIDE_SEND_WINDOW);
      return held;
    }
    const attempt = C.attemptOf(headers) + 1;
    const cpu0 = cpuMs();
    const res = await vendor.send(msg);
    const sendCpu = cpuMs() - cpu0;
    ledger.finish(msg.refkey, hash, res.outcome);
    const out = { ...r, ...res.trace, outcome: res.outcome, code: res.code, error: res.error, attempt,
      send_cpu_ms: sendCpu, token_fetched: res.tokenFetched };
    switch (res.outcome) {
      case C.SENT:
        return { ...out, queue: '', route: null };
      case C.REJECTED:
        return { ...out, queue: cfg.queue + '.failed', route: { reason: 'REJECTED', code: res.code } };
      case C.UNKNOWN:
        return { ...out, queue: cfg.queue + '.unknown', route: { reason: 'UNKNOWN' } };
      default: { // NOT_SENT
        if (attempt >= cfg.maxAttempts) {
          return { ...out, queue: cfg.queue + '.dead', route: { reason: 'MAX_ATTEMPTS', attempt } };
        }
        const delay = Math.min(Math.max(cfg.retryDelayMs, res.retryAfterMs || 0), cfg.retryMaxDelayMs);
        return { ...out, queue: cfg.queue + '.retry', route: { reason: 'NOT_SENT', attempt, expirationMs: delay } };
      }
    }
  };
}

async function run(cfg, stopSignal) {
  const amqp = require('amqplib'); // loaded here so the unit tests need no npm install
  const table = C.parseTable(cfg.statusTable);
  const client = newClient(cfg);
  const vendor = new Vendor(cfg, client, table);
  const ledger = new Ledger(cfg.ledger);
  const records = new Writer(cfg.records);
  const clockOffset = cfg.clockStart ? Date.parse(cfg.clockStart) - Date.now() : 0;
  const clock = () => new Date(Date.now() + clockOffset);

  const conn = await amqp.connect(cfg.amqpURL, { heartbeat: 10 });
  const ch = await conn.createConfirmChannel();
  for (const [name, args] of queuesOf(cfg)) await ch.assertQueue(name, { durable: true, arguments: args });
  await ch.prefetch(1);
  log('INFO', 'worker started', { mode: client.mode, amqp_url: redact(cfg.amqpURL), queue: cfg.queue, vendor_url: cfg.vendorURL });

  let seq = 0;
  const intake = new Intake(cfg.maxMessages);
  let finish;
  const finished = new Promise((resolve, reject) => { finish = { resolve, reject }; });
  conn.on('error', (e) => finish.reject(e));
  conn.on('close', () => finish.resolve());

  const publish = (queue, body, headers, expirationMs) => new Promise((resolve, reject) => {
    const opts = { persistent: true, headers };
    if (expirationMs != null) opts.expiration = String(Math.max(1, Math.ceil(expirationMs)));
    ch.sendToQueue(queue, body, opts, (err) => (err ? reject(err) : resolve()));
  });

  const handle = newHandler({ cfg, ledger, vendor, clock, nextSeq: () => ++seq });

  let busy = Promise.resolve();
  const { consumerTag } = await ch.consume(cfg.queue, (d) => {
    if (d === null) return finish.resolve(); // consumer cancelled by the broker
    busy = busy.then(async () => {
      if (!intake.admits()) return; // closed: left unacked, requeued at close (src/intake.js)
      let r;
      try {
        r = await handle(d);
        if (r.route) {
          const h = { 'x-notifier-outcome': r.outcome, 'x-notifier-reason': r.route.reason };
          if (r.route.attempt != null) h['x-notifier-attempt'] = r.route.attempt;
          else if (r.attempt) h['x-notifier-attempt'] = r.attempt;
          if (r.error) h['x-notifier-error'] = r.error;
          if (r.route.code) h['x-notifier-vendor-code'] = r.route.code;
          await publish(r.queue, d.content, h, r.route.expirationMs);
        }
        ch.ack(d);
      } catch (e) {
        log('WARN', 'message requeued', { error: e.message });
        try { ch.nack(d, false, true); } catch (_) { /* channel gone: the broker redelivers */ }
        return;
      }
      const { route, ...fields } = r;
      records.write(record({ ...fields, end: new Date(), cpu_ms: cpuMs() }));
      if (intake.handledOne()) finish.resolve();
    });
  }, { noAck: false });

  stopSignal.then(() => { intake.stop(); finish.resolve(); });
  try {
    await finished;
  } finally {
    try { await ch.cancel(consumerTag); } catch (_) { /* closed already */ }
    await busy; // the in-flight message ends in its place first
    try { await conn.close(); } catch (_) { /* closed already */ }
    client.close();
    ledger.close();
    records.close();
    log('INFO', 'worker stopped', { handled: intake.handled });
  }
}

module.exports = { run, queuesOf, newHandler };
