"""The attempt ledger and the records file.

Ledger: an append-only JSON Lines file, fsynced after every line, so an
attempt is on disk before its request goes out
(docs/outcomes.md#at-least-once-and-the-ledger); the last line of a refkey
wins when read back. Records: one JSON line per handled message with the
keys of worker/records.Record (docs/worker-contract.md#records)."""
import datetime
import hashlib
import json
import os
import time

from . import classify as C


def hash_of(body):
    """sha256 hex of the message body (bytes)."""
    return hashlib.sha256(body).hexdigest()


def now_iso():
    return rfc3339(datetime.datetime.now(datetime.timezone.utc))


def rfc3339(t):
    """t (aware datetime) as RFC 3339 in UTC with microseconds and Z."""
    return t.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Ledger:
    """path "" keeps the ledger in memory only (tests)."""

    def __init__(self, path):
        self.entries = {}
        self.fd = None
        if not path:
            return
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                for line in f:
                    if not line.strip():
                        continue
                    try:
                        e = json.loads(line)
                    except ValueError:
                        continue  # a torn last line: the attempt before it stands
                    self.entries[e["refkey"]] = e
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def decide(self, refkey, h):
        """None when refkey may be sent, else (outcome, reason): another body
        (INVALID, REFKEY_CONFLICT), a final outcome (DUPLICATE), or an attempt
        without outcome (UNKNOWN: it may have reached the vendor)."""
        e = self.entries.get(refkey)
        if e is None:
            return None
        if e["hash"] != h:
            return C.INVALID, "REFKEY_CONFLICT"
        if e["outcome"] is None:
            return C.UNKNOWN, "ATTEMPT_WITHOUT_OUTCOME"
        if e["outcome"] in (C.NOT_SENT, C.OUTSIDE_SEND_WINDOW):
            return None
        return C.DUPLICATE, "ALREADY_" + e["outcome"]

    def begin(self, refkey, h):
        """Writes an attempt without outcome and fsyncs it."""
        prev = self.entries.get(refkey)
        self._put({"refkey": refkey, "hash": h, "outcome": None,
                   "attempts": (prev["attempts"] if prev else 0) + 1, "at": now_iso()})

    def finish(self, refkey, h, outcome):
        """Writes the attempt's outcome and fsyncs it."""
        prev = self.entries.get(refkey)
        self._put({"refkey": refkey, "hash": h, "outcome": outcome,
                   "attempts": prev["attempts"] if prev else 0, "at": now_iso()})

    def _put(self, e):
        if self.fd is not None:
            os.write(self.fd, (json.dumps(e) + "\n").encode())
            os.fsync(self.fd)
        self.entries[e["refkey"]] = e

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def record(f):
    """One records line (dict) from f. Required: outcome, start, end (aware
    datetimes); phase times in ms. Raises ValueError for a missing one."""
    for k in ("outcome", "start", "end"):
        if f.get(k) is None:
            raise ValueError("record: %s is required" % k)
    r3 = lambda ms: round(ms or 0, 3)  # noqa: E731
    r = {
        "seq": f.get("seq") or 0, "refkey": f.get("refkey") or "", "outcome": f["outcome"],
        "queue": f.get("queue") or "", "redelivered": bool(f.get("redelivered")),
        "start": rfc3339(f["start"]), "end": rfc3339(f["end"]),
        "total_ms": r3(f.get("total_ms")), "connect_ms": r3(f.get("connect_ms")),
        "tls_handshake_ms": r3(f.get("tls_handshake_ms")), "ttfb_ms": r3(f.get("ttfb_ms")),
        "reused": bool(f.get("reused")), "tls_version": f.get("tls_version") or "",
        "got_conns": f.get("got_conns") or 0,
        "cpu_ms": r3(f.get("cpu_ms")), "send_cpu_ms": r3(f.get("send_cpu_ms")),
    }
    for k in ("error", "code", "replica", "category", "attempt"):
        if f.get(k):
            r[k] = f[k]
    for k in ("clock", "held_until"):
        if f.get(k) is not None:
            r[k] = rfc3339(f[k])
    for k in ("token_fetched", "wrote_request", "no_call"):
        if f.get(k):
            r[k] = True
    return r


class Records:
    """Appends records to path, one write(2) per line ("" = nowhere)."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if path else None

    def write(self, rec):
        if self.fd is not None:
            os.write(self.fd, (json.dumps(rec, separators=(",", ":")) + "\n").encode())

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def cpu_ms():
    """The process's cumulative user+sys CPU, ms."""
    return time.process_time() * 1000
