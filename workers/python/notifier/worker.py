"""The consumer: pika's BlockingConnection, one message at a time (prefetch
1), the delivery rules of docs/outcomes.md, routing and headers of
docs/worker-contract.md#queues. No broker reconnect: a lost connection ends
the process (docs/worker-contract.md#what-the-reference-workers-do-not-do)."""
import datetime
import json
import math
import signal
import sys
import urllib.parse

from . import classify as C
from .clients import new_client
from .config import redact
from .ledger import Ledger, Records, cpu_ms, hash_of, record
from .message import Invalid, decode, until_open
from .vendor import Vendor


def queues_of(c):
    """The six queues and their arguments: the topology the lab's driver
    declares (worker/queues)."""
    def plain():
        return {"x-queue-type": c.queue_type}

    def to(target):
        return dict(plain(), **{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": target})
    main = to(c.queue + ".dead")
    if c.single_active_consumer:
        main["x-single-active-consumer"] = True
    if c.queue_type == "quorum":
        main["x-delivery-limit"] = c.delivery_limit
    return [
        (c.queue, main),
        (c.queue + ".retry", dict(to(c.queue), **{"x-message-ttl": c.retry_max_delay_ms})),
        (c.queue + ".unknown", plain()),
        (c.queue + ".held", to(c.queue)),
        (c.queue + ".failed", plain()),
        (c.queue + ".dead", plain()),
    ]


def log(level, msg, **attrs):
    t = datetime.datetime.now(datetime.timezone.utc).isoformat()
    sys.stderr.write(json.dumps(dict(time=t, level=level, msg=msg, **attrs)) + "\n")


def amqp_parameters(url):
    """pika's parameters of AMQP_URL; a path "" or "/" names the vhost "/"
    as the Go and Node clients read it."""
    import pika
    p = pika.URLParameters(url)
    path = urllib.parse.urlsplit(url).path
    if path in ("", "/"):
        p.virtual_host = "/"
    return p


class Worker:
    def __init__(self, cfg):
        self.cfg = cfg
        self.client = new_client(cfg)
        self.vendor = Vendor(cfg, self.client, C.parse_table(cfg.status_table))
        self.ledger = Ledger(cfg.ledger)
        self.records = Records(cfg.records)
        self.offset = (cfg.clock_start - datetime.datetime.now(datetime.timezone.utc)) if cfg.clock_start else datetime.timedelta(0)
        self.seq = 0
        self.handled = 0

    def clock(self):
        return datetime.datetime.now(datetime.timezone.utc) + self.offset

    def held_if_closed(self, msg, r, now):
        """The held record and route of an ad when the send window is
        closed at now (the lab clock), else None."""
        if msg["category"] != "ad":
            return None
        wait = until_open(now, *self.cfg.window)
        if wait <= 0:
            return None
        return (dict(r, clock=now, outcome=C.OUTSIDE_SEND_WINDOW, queue=self.cfg.queue + ".held",
                     held_until=now + datetime.timedelta(milliseconds=wait)),
                ("OUTSIDE_SEND_WINDOW", None, wait))

    def handle(self, body, headers, redelivered):
        """The record fields (dict) of one delivery and its route: None (ack
        only) or (queue, reason, extra headers, expiration ms)."""
        c = self.cfg
        self.seq += 1
        now = self.clock()
        r = {"seq": self.seq, "start": datetime.datetime.now(datetime.timezone.utc), "redelivered": redelivered,
             "replica": c.worker_id, "clock": now}
        try:
            msg = decode(body)
        except Invalid as e:
            return dict(r, refkey=e.refkey, outcome=C.INVALID, error=str(e), queue=c.queue + ".dead"), (str(e), None, None)
        r["refkey"], r["category"] = msg["refkey"], msg["category"]
        held = self.held_if_closed(msg, r, now)
        if held:
            return held
        h = hash_of(body)
        prior = self.ledger.decide(msg["refkey"], h)
        if prior:
            outcome, reason = prior
            q = {C.INVALID: ".dead", C.UNKNOWN: ".unknown"}.get(outcome)
            if outcome == C.UNKNOWN:
                self.ledger.finish(msg["refkey"], h, C.UNKNOWN)
                r["no_call"] = True  # decided from the ledger: the client was not called
            return dict(r, outcome=outcome, error=reason, queue=c.queue + q if q else ""), ((reason, None, None) if q else None)
        self.ledger.begin(msg["refkey"], h)  # fsynced before the request goes out
        # The last look before the request: the begin (an fsync) may have
        # taken the clock past the window's end. A hold then closes the
        # attempt as OUTSIDE_SEND_WINDOW, which the ledger lets send again.
        now = self.clock()
        held = self.held_if_closed(msg, r, now)
        if held:
            self.ledger.finish(msg["refkey"], h, C.OUTSIDE_SEND_WINDOW)
            return held
        attempt = C.attempt_of(headers) + 1
        cpu0 = cpu_ms()
        res = self.vendor.send(msg)
        send_cpu = cpu_ms() - cpu0
        self.ledger.finish(msg["refkey"], h, res.outcome)
        out = dict(r, **res.trace)
        out.update(outcome=res.outcome, code=res.code, error=res.error, attempt=attempt,
                   send_cpu_ms=send_cpu, token_fetched=res.token_fetched)
        if res.outcome == C.SENT:
            return dict(out, queue=""), None
        if res.outcome == C.REJECTED:
            return dict(out, queue=c.queue + ".failed"), ("REJECTED", {"x-notifier-vendor-code": res.code}, None)
        if res.outcome == C.UNKNOWN:
            return dict(out, queue=c.queue + ".unknown"), ("UNKNOWN", None, None)
        if attempt >= c.max_attempts:  # NOT_SENT
            return dict(out, queue=c.queue + ".dead"), ("MAX_ATTEMPTS", None, None)
        delay = min(max(c.retry_delay_ms, res.retry_after_ms or 0), c.retry_max_delay_ms)
        return dict(out, queue=c.queue + ".retry"), ("NOT_SENT", None, delay)

    def run(self):
        import pika
        c = self.cfg
        conn = pika.BlockingConnection(amqp_parameters(c.amqp_url))
        ch = conn.channel()
        ch.confirm_delivery()
        for name, args in queues_of(c):
            ch.queue_declare(name, durable=True, arguments=args)
        ch.basic_qos(prefetch_count=1)
        log("INFO", "worker started", mode=self.client.mode, library_version=self.client.version,
            amqp_url=redact(c.amqp_url), queue=c.queue, vendor_url=c.vendor_url)

        def on_message(chan, method, props, body):
            headers = props.headers or {}
            try:
                r, route = self.handle(body, headers, method.redelivered)
                if route is not None:
                    reason, extra, expiration = route
                    h = {"x-notifier-outcome": r["outcome"], "x-notifier-reason": reason}
                    if r.get("attempt"):
                        h["x-notifier-attempt"] = r["attempt"]
                    if r.get("error"):
                        h["x-notifier-error"] = r["error"]
                    h.update(extra or {})
                    p = pika.BasicProperties(delivery_mode=2, headers=h,
                                             expiration=None if expiration is None else str(max(1, math.ceil(expiration))))
                    chan.basic_publish("", r["queue"], body, p, mandatory=True)
                chan.basic_ack(method.delivery_tag)
            except (pika.exceptions.UnroutableError, pika.exceptions.NackError) as e:
                log("WARN", "message requeued", error=str(e))
                chan.basic_nack(method.delivery_tag, requeue=True)
                return
            r["end"] = datetime.datetime.now(datetime.timezone.utc)
            r["cpu_ms"] = cpu_ms()
            self.records.write(record(r))
            self.handled += 1
            if c.max_messages and self.handled >= c.max_messages:
                chan.stop_consuming()

        def stop(*_):
            conn.add_callback_threadsafe(ch.stop_consuming)
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        ch.basic_consume(c.queue, on_message, auto_ack=False)
        try:
            ch.start_consuming()
        finally:
            try:
                conn.close()
            except Exception:  # closed already
                pass
            self.client.close()
            self.ledger.close()
            self.records.close()
            log("INFO", "worker stopped", handled=self.handled)
