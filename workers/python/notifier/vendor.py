"""The vendor API over a client (clients.py): the token call (Basic or
OAuth2 client credentials, VENDOR_TOKEN_AUTH) and the send, judged with the
status table (docs/vendor-api.md, docs/worker-contract.md)."""
import base64
import json
import time
import urllib.parse

from . import classify as C
from .clients import SendError
from .message import parse_rfc3339

REFRESH_MARGIN_S = 60


def token_of(body, now_s):
    """(token, expires_at_s) of a token answer ({"accesstoken","expired"} or
    OAuth2's {"access_token","expires_in"}), or None."""
    try:
        t = json.loads(body)
    except ValueError:
        return None
    if not isinstance(t, dict):
        return None
    tok = t.get("accesstoken") or t.get("access_token")
    if not isinstance(tok, str) or not tok:
        return None
    exp = now_s + 3600
    if isinstance(t.get("expired"), str):
        try:
            exp = parse_rfc3339(t["expired"]).timestamp()
        except ValueError:
            pass
    elif isinstance(t.get("expires_in"), (int, float)):
        exp = now_s + t["expires_in"]
    return tok, exp


class Result:
    def __init__(self, outcome, code="", error="", trace=None, token_fetched=False, retry_after_ms=None):
        self.outcome, self.code, self.error = outcome, code, error
        self.trace, self.token_fetched, self.retry_after_ms = trace or {}, token_fetched, retry_after_ms


class Vendor:
    def __init__(self, cfg, client, table):
        self.cfg, self.client, self.table = cfg, client, table
        self.token, self.refresh_at = None, 0.0

    def _fetch_token(self):
        c = self.cfg
        if c.token_auth == "form":
            h = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
            body = urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": c.client_id,
                                           "client_secret": c.client_secret})
        else:
            basic = base64.b64encode(("%s:%s" % (c.client_id, c.client_secret)).encode()).decode()
            h = {"Authorization": "Basic " + basic, "Accept": "application/json"}
            body = ""
        res = self.client.request("POST", c.token_path, h, body)
        now = time.time()
        tok = token_of(res.body, now) if res.status == 200 else None
        if tok is None:
            raise SendError("token call answered %d" % res.status, False, res.trace)
        self.token = tok[0]
        self.refresh_at = tok[1] - min(REFRESH_MARGIN_S, (tok[1] - now) / 10)

    def send(self, msg):
        """POSTs one message; never raises for a vendor failure: every
        failure is a Result's outcome."""
        c = self.cfg
        fetched = False
        body = json.dumps({c.refkey_field: msg["refkey"], "recipient": msg["recipient"],
                           "template_code": msg["template_code"], "text": msg["text"],
                           "category": msg["category"]})
        tries = 0
        while True:
            if self.token is None or time.time() >= self.refresh_at:
                fetched = True
                try:
                    self._fetch_token()
                except SendError as e:  # no send was attempted: provably not sent
                    return Result(C.NOT_SENT, "", "token: %s" % e, e.trace, True)
            h = {"Content-Type": "application/json", "Authorization": "Bearer " + self.token}
            if c.correlation_header:
                h[c.correlation_header] = msg["refkey"]
            try:
                res = self.client.request("POST", c.send_path, h, body)
            except SendError as e:
                return Result(C.classify_failure(e.wrote_request), "", str(e), e.trace, fetched)
            if res.status == 401 and tries == 0:
                self.token = None  # refused before processing: one new token, one more try
                tries += 1
                continue
            outcome, code = C.classify_answer(self.table, res.status, res.body, c.code_field)
            if res.status == 401:
                outcome = C.REJECTED
            ra = C.retry_after_ms(res.headers.get("retry-after"), time.time())
            return Result(outcome, code, "" if outcome == C.SENT else "status %d" % res.status,
                          res.trace, fetched, ra)

