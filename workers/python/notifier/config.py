"""The environment of docs/worker-contract.md, read once at start."""
import os
import re
import socket

from .message import parse_rfc3339

MODES = ("requests", "session", "httpx", "session-fixed", "httpx-fixed")

# FIXED_MODES apply the one-line fix of their library (README.md, "Fixed
# variants"): an idle timeout of CLIENT_IDLE_TIMEOUT_MS, which they require.
FIXED_MODES = ("session-fixed", "httpx-fixed")


class Config:
    """The contract's variables as attributes; load() builds one."""


def load(env):
    """A Config from env (a mapping); raises ValueError listing every bad
    variable with what is allowed."""
    errs = []

    def s(k, d=""):
        v = env.get(k)
        return d if v is None or v == "" else v

    def n(k, d, lo):
        v = s(k, str(d))
        if not v.isdigit() or int(v) < lo:
            errs.append("%s=%r: want a whole number >= %d" % (k, v, lo))
            return d
        return int(v)

    c = Config()
    c.amqp_url = s("AMQP_URL", "amqp://guest:guest@localhost:5672/")
    c.queue = s("QUEUE", "notifications")
    c.queue_type = s("QUEUE_TYPE", "classic")
    c.single_active_consumer = s("SINGLE_ACTIVE_CONSUMER", "true") == "true"
    c.delivery_limit = n("DELIVERY_LIMIT", 5, 1)
    c.retry_delay_ms = n("RETRY_DELAY_MS", 5000, 1)
    c.retry_max_delay_ms = n("RETRY_MAX_DELAY_MS", 300000, 1)
    c.max_attempts = n("MAX_ATTEMPTS", 5, 1)
    c.vendor_url = s("VENDOR_URL").rstrip("/")
    c.ca_file = s("VENDOR_CA_FILE")
    c.client_cert = s("VENDOR_CLIENT_CERT")
    c.client_key = s("VENDOR_CLIENT_KEY")
    c.client_id = s("VENDOR_CLIENT_ID")
    c.client_secret = s("VENDOR_CLIENT_SECRET")
    c.token_path = s("VENDOR_TOKEN_PATH", "/v1/token")
    c.token_auth = s("VENDOR_TOKEN_AUTH", "basic")
    c.send_path = s("VENDOR_SEND_PATH", "/v3/message")
    c.refkey_field = s("VENDOR_REFKEY_FIELD", "refkey")
    c.code_field = s("VENDOR_CODE_FIELD", "code")
    c.correlation_header = s("VENDOR_CORRELATION_HEADER", "X-Refkey")
    c.status_table = s("VENDOR_STATUS_TABLE")
    c.response_timeout_ms = n("VENDOR_RESPONSE_TIMEOUT_MS", 10000, 1)
    c.records = s("RECORDS")
    c.ledger = s("LEDGER")
    c.worker_id = s("WORKER_ID", socket.gethostname())
    c.max_messages = n("MAX_MESSAGES", 0, 0)
    c.clock_start = None
    c.window = (s("WINDOW_START", "08:00"), s("WINDOW_END", "20:50"), s("WINDOW_ZONE", "Asia/Seoul"))
    c.client_mode = s("CLIENT_MODE", "session")
    c.client_idle_timeout_ms = n("CLIENT_IDLE_TIMEOUT_MS", 0, 0)
    if s("CLOCK_START"):
        try:
            c.clock_start = parse_rfc3339(s("CLOCK_START"))
        except ValueError:
            errs.append("CLOCK_START=%r: want RFC 3339" % s("CLOCK_START"))
    if not re.match(r"^https://[^/]+$", c.vendor_url):
        errs.append("VENDOR_URL=%r: want https://host[:port]" % c.vendor_url)
    if not c.client_id:
        errs.append("VENDOR_CLIENT_ID: empty")
    if not c.client_secret:
        errs.append("VENDOR_CLIENT_SECRET: empty")
    if c.queue_type not in ("classic", "quorum"):
        errs.append("QUEUE_TYPE=%r: known types: classic, quorum" % c.queue_type)
    if c.token_auth not in ("basic", "form"):
        errs.append("VENDOR_TOKEN_AUTH=%r: known: basic, form" % c.token_auth)
    if c.client_mode not in MODES:
        errs.append("CLIENT_MODE=%r: known modes: %s" % (c.client_mode, ", ".join(MODES)))
    if c.client_mode in FIXED_MODES and c.client_idle_timeout_ms < 1:
        errs.append("CLIENT_IDLE_TIMEOUT_MS: CLIENT_MODE=%s needs the idle timeout in ms (the lab sets it below the vendor's keep-alive)" % c.client_mode)
    if not c.ledger:
        errs.append("LEDGER: empty (a file path in the state folder)")
    if c.retry_delay_ms > c.retry_max_delay_ms:
        errs.append("RETRY_DELAY_MS above RETRY_MAX_DELAY_MS")
    if errs:
        raise ValueError("bad environment: " + "; ".join(errs))
    return c


def redact(url):
    """url with its password hidden, for logs."""
    return re.sub(r"(//[^:/@]*:)[^@]*@", r"\1xxxxx@", url)


if __name__ == "__main__":  # pragma: no cover
    print(vars(load(os.environ)))
