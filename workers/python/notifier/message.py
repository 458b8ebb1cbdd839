"""The message contract (worker/message) and the send window of advertising
messages (docs/case.md#delivery-rules)."""
import datetime
import json
import re
import zoneinfo


class Invalid(ValueError):
    """A body that cannot be decoded or validated; .refkey is its refkey
    ("" when it has none)."""

    def __init__(self, reason, refkey=""):
        super().__init__(reason)
        self.refkey = refkey


def decode(body):
    """The message (dict) of a body (bytes); raises Invalid with the reason."""
    try:
        m = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise Invalid("body is not JSON") from None
    if not isinstance(m, dict):
        raise Invalid("body is not a JSON object")
    refkey = m.get("refkey") if isinstance(m.get("refkey"), str) else ""
    if not refkey:
        raise Invalid("refkey: empty")
    if m.get("category") not in ("info", "ad"):
        raise Invalid("category %s: want info or ad" % json.dumps(m.get("category")), refkey)
    for f in ("recipient", "template_code", "text"):
        if not isinstance(m.get(f), str) or m[f] == "":
            raise Invalid("%s: empty" % f, refkey)
    return m


def parse_hm(s, name):
    """Minutes since midnight of "HH:MM"; ValueError otherwise."""
    m = re.fullmatch(r"(\d\d):(\d\d)", s or "")
    if not m or int(m.group(1)) > 23 or int(m.group(2)) > 59:
        raise ValueError("%s %r: want HH:MM" % (name, s))
    return int(m.group(1)) * 60 + int(m.group(2))


def until_open(t, start, end, zone):
    """0 when t (aware datetime) is inside [start, end) local time in zone,
    else ms until the window opens (zones without daylight saving assumed,
    as Asia/Seoul)."""
    s, e = parse_hm(start, "window start"), parse_hm(end, "window end")
    local = t.astimezone(zoneinfo.ZoneInfo(zone))
    minutes = local.hour * 60 + local.minute
    inside = s <= minutes < e if s <= e else (minutes >= s or minutes < e)
    if inside:
        return 0
    wait = ((s - minutes + 1440) % 1440) or 1440
    into = local.second * 1000 + local.microsecond // 1000
    return wait * 60000 - into


def parse_rfc3339(s):
    """An aware datetime of an RFC 3339 text (Go's RFC3339Nano included:
    fractions beyond microseconds are cut)."""
    s = re.sub(r"(\.\d{6})\d+", r"\1", s.strip()).replace("Z", "+00:00").replace("z", "+00:00")
    t = datetime.datetime.fromisoformat(s)
    if t.tzinfo is None:
        raise ValueError("%r: no time zone offset" % s)
    return t
