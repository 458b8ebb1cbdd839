"""Outcome classification of one send (docs/outcomes.md) with the status
table of docs/vendor-api.md#status-table. The names are the project's
outcome vocabulary (worker/outcome); this module only spells them."""
import email.utils
import json
import re

SENT = "SENT"
REJECTED = "REJECTED"
NOT_SENT = "NOT_SENT"
UNKNOWN = "UNKNOWN"
OUTSIDE_SEND_WINDOW = "OUTSIDE_SEND_WINDOW"
INVALID = "INVALID"
DUPLICATE = "DUPLICATE"
TABLE_OUTCOMES = (REJECTED, NOT_SENT, UNKNOWN)
_STATUS_KEY = re.compile(r"^[1-5](\d\d|xx)$")


def default_table():
    """The table of a vendor whose documentation says nothing more: 429 and
    408 NOT_SENT, other 4xx REJECTED, 5xx UNKNOWN."""
    return {"success_code": "1000",
            "statuses": {"429": NOT_SENT, "408": NOT_SENT, "4xx": REJECTED, "5xx": UNKNOWN},
            "codes": {}}


def parse_table(text):
    """Reads a status table from JSON text ("" = default_table()). Raises
    ValueError naming the bad key and the allowed values."""
    if not text:
        return default_table()
    try:
        t = json.loads(text)
    except ValueError as e:
        raise ValueError("status table: not JSON: %s" % e) from None
    out = {"success_code": str(t.get("success_code") or ""),
           "statuses": t.get("statuses") or {}, "codes": t.get("codes") or {}}
    if not out["success_code"]:
        raise ValueError("status table: success_code is empty")
    for where in ("statuses", "codes"):
        for k, v in out[where].items():
            if v not in TABLE_OUTCOMES:
                raise ValueError("status table: %s.%s = %r; allowed: %s" % (where, k, v, ", ".join(TABLE_OUTCOMES)))
            if where == "statuses" and not _STATUS_KEY.match(k):
                raise ValueError("status table: statuses key %r; allowed: NNN or Nxx" % k)
    return out


def code_of(body, field):
    """The business code of a JSON answer body at field as a string, or
    None when the body does not parse or has no such field."""
    try:
        v = json.loads(body)[field]
    except (ValueError, TypeError, KeyError, IndexError):
        return None
    if isinstance(v, bool):
        return None
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, (str, int, float)):
        return str(v)
    return None


def classify_answer(table, status, body, code_field="code"):
    """(outcome, code) of an HTTP answer in the table's order: a listed
    code; then a 2xx (success code SENT, another code REJECTED, no code
    UNKNOWN); then the status exact, then its class; else UNKNOWN. code is
    the business code, or the status when the body has none."""
    code = code_of(body, code_field or "code")
    if code is not None and code in table["codes"]:
        return table["codes"][code], code
    if 200 <= status < 300:
        if code is None:
            return UNKNOWN, str(status)
        return (SENT if code == table["success_code"] else REJECTED), code
    o = table["statuses"].get(str(status)) or table["statuses"].get("%dxx" % (status // 100))
    return o or UNKNOWN, code if code is not None else str(status)


def classify_failure(wrote_request):
    """A send without an answer: NOT_SENT only when the request provably
    never started to be written (DNS, connect, TLS), else UNKNOWN
    (docs/outcomes.md#reasons)."""
    return UNKNOWN if wrote_request else NOT_SENT


def retry_after_ms(value, now_s):
    """Retry-After (seconds or an HTTP date) as ms from now_s (epoch
    seconds); None when absent or unreadable."""
    if value is None or str(value).strip() == "":
        return None
    v = str(value).strip()
    if v.isdigit():
        return int(v) * 1000
    try:
        t = email.utils.parsedate_to_datetime(v)
    except (TypeError, ValueError):
        return None
    if t is None:
        return None
    return max(0, int((t.timestamp() - now_s) * 1000))


def attempt_of(headers):
    """The x-notifier-attempt header as publishers in every language send
    it (int, decimal str or bytes); 0 when missing or bad."""
    v = (headers or {}).get("x-notifier-attempt")
    if isinstance(v, bytes):
        v = v.decode("utf-8", "replace")
    if isinstance(v, bool):
        return 0
    try:
        n = int(str(v).strip()) if isinstance(v, str) else int(v) if isinstance(v, int) else -1
    except ValueError:
        return 0
    return min(n, 2**31 - 1) if n >= 0 else 0
