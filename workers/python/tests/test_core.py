"""Unit tests of the broker-free modules: classification and status table,
ledger, records shape, message, send window, config, token answers."""
import datetime
import json
import os
import tempfile
import types
import unittest

from notifier import classify as C
from notifier import config, ledger, message, vendor
from notifier.worker import Worker, queues_of

ALIMTALK = C.parse_table(json.dumps({
    "success_code": "1000",
    "statuses": {"429": "NOT_SENT", "408": "NOT_SENT", "4xx": "REJECTED", "5xx": "UNKNOWN"},
    "codes": {"4290": "NOT_SENT"},
}))
ENV = {"VENDOR_URL": "https://api.vendor.test", "VENDOR_CLIENT_ID": "id", "VENDOR_CLIENT_SECRET": "s",
       "LEDGER": "/tmp/x"}


class ClassifyTest(unittest.TestCase):
    def test_table_order(self):
        cases = [
            (200, '{"code":"1000"}', "SENT", "1000"),
            (200, '{"code":1000}', "SENT", "1000"),
            (200, '{"code":"3018"}', "REJECTED", "3018"),
            (200, "oops", "UNKNOWN", "200"),
            (429, '{"code":"4290"}', "NOT_SENT", "4290"),
            (500, '{"code":"4290"}', "NOT_SENT", "4290"),
            (408, "", "NOT_SENT", "408"),
            (400, '{"code":"3001"}', "REJECTED", "3001"),
            (502, "<html>", "UNKNOWN", "502"),
            (302, "", "UNKNOWN", "302"),
        ]
        for status, body, want, code in cases:
            with self.subTest(status=status, body=body):
                self.assertEqual(C.classify_answer(ALIMTALK, status, body, "code"), (want, code))

    def test_code_field(self):
        sms = C.parse_table('{"success_code":"0","statuses":{"4xx":"REJECTED"}}')
        self.assertEqual(C.classify_answer(sms, 202, '{"result_code":"0"}', "result_code")[0], "SENT")
        self.assertEqual(C.classify_answer(sms, 202, '{"code":"0"}', "result_code")[0], "UNKNOWN")

    def test_bad_tables(self):
        for t in ['{"success_code":""}', '{"success_code":"1","statuses":{"4xx":"SENT"}}',
                  '{"success_code":"1","statuses":{"4x":"REJECTED"}}', "nope"]:
            with self.subTest(t=t), self.assertRaises(ValueError):
                C.parse_table(t)

    def test_failure(self):
        self.assertEqual(C.classify_failure(False), "NOT_SENT")
        self.assertEqual(C.classify_failure(True), "UNKNOWN")

    def test_retry_after_and_attempt(self):
        self.assertEqual(C.retry_after_ms("7", 0), 7000)
        self.assertEqual(C.retry_after_ms("Thu, 01 Jan 1970 00:00:10 GMT", 4), 6000)
        self.assertIsNone(C.retry_after_ms("soon", 0))
        self.assertIsNone(C.retry_after_ms(None, 0))
        for v, want in [(3, 3), ("4", 4), (b"5", 5), (-1, 0), ("x", 0), (None, 0), (True, 0), (2**40, 2**31 - 1)]:
            self.assertEqual(C.attempt_of({"x-notifier-attempt": v}), want, v)


class LedgerTest(unittest.TestCase):
    def test_decide_and_reload(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "ledger.json")
            lg = ledger.Ledger(p)
            self.assertIsNone(lg.decide("r1", "h"))
            lg.begin("r1", "h")
            self.assertEqual(lg.decide("r1", "h"), ("UNKNOWN", "ATTEMPT_WITHOUT_OUTCOME"))
            self.assertEqual(lg.decide("r1", "other"), ("INVALID", "REFKEY_CONFLICT"))
            lg.finish("r1", "h", "SENT")
            lg.begin("r2", "h")
            lg.finish("r2", "h", "NOT_SENT")
            lg.close()
            with open(p, "a") as f:
                f.write('{"refkey": "r3", "ha')  # torn last line
            lg = ledger.Ledger(p)
            self.assertEqual(lg.decide("r1", "h"), ("DUPLICATE", "ALREADY_SENT"))
            self.assertIsNone(lg.decide("r2", "h"))  # NOT_SENT may be sent again
            self.assertIsNone(lg.decide("r3", "h"))
            lg.begin("r2", "h")
            self.assertEqual(lg.entries["r2"]["attempts"], 2)
            lg.close()

    def test_record_shape(self):
        t = datetime.datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=datetime.timezone.utc)
        r = ledger.record({"refkey": "k", "outcome": "SENT", "start": t, "end": t, "total_ms": 1.23456,
                           "attempt": 1, "token_fetched": True})
        self.assertEqual(r["start"], "2026-01-02T03:04:05.123456Z")
        self.assertEqual(r["total_ms"], 1.235)
        self.assertEqual(r["attempt"], 1)
        self.assertTrue(r["token_fetched"])
        self.assertNotIn("error", r)
        with self.assertRaises(ValueError):
            ledger.record({"outcome": "SENT", "start": t})
        with tempfile.TemporaryDirectory() as d:
            w = ledger.Records(os.path.join(d, "r.jsonl"))
            w.write(r)
            w.write(r)
            w.close()
            with open(os.path.join(d, "r.jsonl")) as f:
                lines = f.read().splitlines()
            self.assertEqual([json.loads(x)["refkey"] for x in lines], ["k", "k"])


class WindowRecheckTest(unittest.TestCase):
    """An ad is checked against the send window again after the ledger's
    begin: a begin that takes the lab clock past 20:50 holds it."""
    KST = datetime.timezone(datetime.timedelta(hours=9))
    AD = json.dumps({"refkey": "ad-1", "category": "ad", "recipient": "r", "template_code": "t",
                     "text": "x"}).encode()

    def handle(self, begin_ms):
        clock = [datetime.datetime(2026, 11, 30, 20, 49, 59, 998000, tzinfo=self.KST)]
        sent = []

        class SlowBegin(ledger.Ledger):
            def begin(self, refkey, h):
                super().begin(refkey, h)
                clock[0] += datetime.timedelta(milliseconds=begin_ms)

        class FakeVendor:
            def send(self, msg):
                sent.append((msg["refkey"], clock[0]))
                return types.SimpleNamespace(outcome=C.SENT, trace={}, code="1000", error=None,
                                             token_fetched=False, retry_after_ms=None)
        w = Worker.__new__(Worker)
        w.cfg = types.SimpleNamespace(queue="q", window=("08:00", "20:50", "Asia/Seoul"), max_attempts=5,
                                      worker_id="t", retry_delay_ms=1, retry_max_delay_ms=1)
        w.vendor, w.ledger, w.seq = FakeVendor(), SlowBegin(""), 0
        w.clock = lambda: clock[0]
        r, route = w.handle(self.AD, {}, False)
        return r, route, sent, w.ledger

    def test_begin_across_the_end(self):
        r, route, sent, lg = self.handle(begin_ms=5)
        self.assertEqual(sent, [], "an ad was sent after 20:50")
        self.assertEqual((r["outcome"], r["queue"], route[0]), (C.OUTSIDE_SEND_WINDOW, "q.held", "OUTSIDE_SEND_WINDOW"))
        self.assertEqual(r["clock"].strftime("%H:%M:%S.%f"), "20:50:00.003000")  # the re-check's reading
        self.assertGreater(route[2], 0)
        self.assertIsNone(lg.decide("ad-1", ledger.hash_of(self.AD)))  # sent later, once the window opens

    def test_begin_inside_the_window(self):
        r, route, sent, _ = self.handle(begin_ms=1)
        self.assertEqual([k for k, _ in sent], ["ad-1"])
        self.assertEqual((r["outcome"], route), (C.SENT, None))


class NoCallTest(unittest.TestCase):
    """A delivery whose refkey has an attempt without outcome in the ledger
    ends UNKNOWN without a call, and its record says no_call; a sent one's
    record does not."""
    INFO = json.dumps({"refkey": "k-1", "category": "info", "recipient": "r", "template_code": "t",
                       "text": "x"}).encode()

    def worker(self, calls):
        class FakeVendor:
            def send(self, msg):
                calls.append(msg["refkey"])
                return types.SimpleNamespace(outcome=C.SENT, trace={}, code="1000", error=None,
                                             token_fetched=False, retry_after_ms=None)
        w = Worker.__new__(Worker)
        w.cfg = types.SimpleNamespace(queue="q", window=("00:00", "23:59", "UTC"), max_attempts=5,
                                      worker_id="t", retry_delay_ms=1, retry_max_delay_ms=1)
        w.vendor, w.ledger, w.seq = FakeVendor(), ledger.Ledger(""), 0
        w.clock = lambda: datetime.datetime(2026, 11, 30, 12, 0, tzinfo=datetime.timezone.utc)
        return w

    def test_unknown_from_the_ledger(self):
        calls = []
        w = self.worker(calls)
        w.ledger.begin("k-1", ledger.hash_of(self.INFO))  # an attempt that never finished
        r, _ = w.handle(self.INFO, {}, True)
        self.assertEqual((r["outcome"], calls), (C.UNKNOWN, []))
        r.update(end=r["start"])
        self.assertIs(ledger.record(r).get("no_call"), True)

    def test_sent(self):
        calls = []
        r, _ = self.worker(calls).handle(self.INFO, {}, False)
        self.assertEqual((r["outcome"], calls), (C.SENT, ["k-1"]))
        r.update(end=r["start"])
        self.assertNotIn("no_call", ledger.record(r))


class MessageTest(unittest.TestCase):
    def test_decode(self):
        ok = {"refkey": "k", "category": "info", "recipient": "r", "template_code": "t", "text": "x"}
        self.assertEqual(message.decode(json.dumps(ok).encode())["refkey"], "k")
        for body, reason, refkey in [(b"{", "body is not JSON", ""), (b"[]", "body is not a JSON object", ""),
                                     (json.dumps(dict(ok, refkey="")).encode(), "refkey: empty", ""),
                                     (json.dumps(dict(ok, category="x")).encode(), 'category "x": want info or ad', "k"),
                                     (json.dumps(dict(ok, text="")).encode(), "text: empty", "k")]:
            with self.subTest(reason=reason):
                with self.assertRaises(message.Invalid) as cm:
                    message.decode(body)
                self.assertEqual((str(cm.exception), cm.exception.refkey), (reason, refkey))

    def test_window(self):
        kst = datetime.timezone(datetime.timedelta(hours=9))
        at = lambda h, m, s=0: datetime.datetime(2026, 11, 30, h, m, s, tzinfo=kst)  # noqa: E731
        w = ("08:00", "20:50", "Asia/Seoul")
        self.assertEqual(message.until_open(at(12, 0), *w), 0)
        self.assertEqual(message.until_open(at(20, 49, 59), *w), 0)
        self.assertEqual(message.until_open(at(20, 50), *w), (11 * 60 + 10) * 60000)
        self.assertEqual(message.until_open(at(7, 59, 30), *w), 30000)
        with self.assertRaises(ValueError):
            message.until_open(at(1, 0), "8:00", "20:50", "Asia/Seoul")

    def test_rfc3339(self):
        t = message.parse_rfc3339("2026-11-30T20:49:50.123456789+09:00")
        self.assertEqual(t.microsecond, 123456)
        self.assertEqual(message.parse_rfc3339("2026-11-30T11:49:50Z").hour, 11)
        with self.assertRaises(ValueError):
            message.parse_rfc3339("2026-11-30T11:49:50")


class ConfigTest(unittest.TestCase):
    def test_defaults_and_errors(self):
        c = config.load(ENV)
        self.assertEqual((c.client_mode, c.response_timeout_ms, c.queue), ("session", 10000, "notifications"))
        with self.assertRaises(ValueError) as cm:
            config.load(dict(ENV, CLIENT_MODE="curl", VENDOR_URL="http://x", MAX_ATTEMPTS="x"))
        for part in ("CLIENT_MODE", "VENDOR_URL", "MAX_ATTEMPTS"):
            self.assertIn(part, str(cm.exception))
        self.assertEqual(config.redact("amqp://guest:pw@h:5672/"), "amqp://guest:xxxxx@h:5672/")

    def test_fixed_modes_need_idle_timeout(self):
        for mode in config.FIXED_MODES:
            with self.assertRaises(ValueError) as cm:
                config.load(dict(ENV, CLIENT_MODE=mode))
            self.assertIn("CLIENT_IDLE_TIMEOUT_MS", str(cm.exception))
            c = config.load(dict(ENV, CLIENT_MODE=mode, CLIENT_IDLE_TIMEOUT_MS="74000"))
            self.assertEqual(c.client_idle_timeout_ms, 74000)
        self.assertEqual(config.load(ENV).client_idle_timeout_ms, 0)

    def test_queues(self):
        q = dict(queues_of(config.load(dict(ENV, QUEUE_TYPE="quorum"))))
        self.assertEqual(q["notifications"]["x-dead-letter-routing-key"], "notifications.dead")
        self.assertEqual(q["notifications"]["x-delivery-limit"], 5)
        self.assertEqual(q["notifications.retry"]["x-message-ttl"], 300000)
        self.assertEqual(q["notifications.retry"]["x-dead-letter-routing-key"], "notifications")
        self.assertEqual(len(q), 6)


class TokenTest(unittest.TestCase):
    def test_token_of(self):
        self.assertEqual(vendor.token_of('{"access_token":"t","expires_in":60}', 100), ("t", 160))
        tok = vendor.token_of('{"accesstoken":"a","expired":"1970-01-01T00:01:40Z"}', 0)
        self.assertEqual(tok, ("a", 100))
        self.assertIsNone(vendor.token_of('{"access_token":""}', 0))
        self.assertIsNone(vendor.token_of("[]", 0))


if __name__ == "__main__":
    unittest.main()
