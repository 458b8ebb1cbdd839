"""The vendor client under test, one per CLIENT_MODE, each with its
library's defaults (README.md says which and where they are documented):

  requests  a bare requests.post per send (requests 2.28, urllib3 1.26)
  session   one requests.Session for the whole run
  httpx     one httpx.Client for the whole run (httpx 0.23, httpcore 0.16)
  session-fixed  session with the documented fix: the pooled connections
            are closed (session.close()) before a request that follows a
            pause of CLIENT_IDLE_TIMEOUT_MS or more
  httpx-fixed    httpx with the documented fix:
            Limits(keepalive_expiry=CLIENT_IDLE_TIMEOUT_MS), the other
            limits at httpx's defaults

What the harness sets is what the contract asks for, nothing else: the run's
CA as the only trust root, the client certificate under mutual TLS, and
VENDOR_RESPONSE_TIMEOUT_MS as the timeout. request() answers an Answer or
raises SendError with wrote_request (docs/outcomes.md#reasons). Nothing here
retries; whatever the library re-sends on its own shows in WireMock's
journal."""
import time


class Answer:
    def __init__(self, status, headers, body, trace):
        self.status, self.headers, self.body, self.trace = status, headers, body, trace


class SendError(Exception):
    """A send without an answer; wrote_request is False only when the
    request provably never started to be written."""

    def __init__(self, msg, wrote_request, trace):
        super().__init__(msg)
        self.wrote_request, self.trace = wrote_request, trace


def _lower(h):
    return {k.lower(): v for k, v in h.items()}


class _Requests:
    """requests.post (per_send) or one requests.Session."""

    def __init__(self, cfg, per_send, idle_s=0):
        import requests
        self.requests = requests
        self.mode = "requests" if per_send else ("session-fixed" if idle_s else "session")
        # idle_s > 0 (session-fixed): urllib3 1.26 has no idle timeout, so
        # the pool is emptied before a request that follows a pause this long.
        self.idle_s, self.last_done = idle_s, None
        self.kw = {"verify": cfg.ca_file or True, "timeout": cfg.response_timeout_ms / 1000}
        if cfg.client_cert:
            self.kw["cert"] = (cfg.client_cert, cfg.client_key)
        self.base = cfg.vendor_url
        self.session = None if per_send else requests.Session()
        self.version = requests.__version__

    def request(self, method, path, headers, body):
        t0 = time.perf_counter()
        trace = {}
        call = self.requests.request if self.session is None else self.session.request
        if self.idle_s and self.last_done is not None and t0 - self.last_done >= self.idle_s:
            self.session.close()  # closes the pooled connections; the Session stays usable
        try:
            r = call(method, self.base + path, data=body.encode(), headers=headers, **self.kw)
        except self.requests.RequestException as e:
            self.last_done = time.perf_counter()
            trace["total_ms"] = (self.last_done - t0) * 1000
            raise SendError("%s: %s" % (type(e).__name__, e), not self._before_write(e), trace) from None
        self.last_done = time.perf_counter()
        trace["total_ms"] = (self.last_done - t0) * 1000
        trace["ttfb_ms"] = r.elapsed.total_seconds() * 1000
        return Answer(r.status_code, _lower(r.headers), r.text, trace)

    def _before_write(self, e):
        """True for failures before the request was written: connect
        (DNS included), connect timeout, TLS handshake."""
        from urllib3 import exceptions as u
        ex = self.requests.exceptions
        if isinstance(e, (ex.SSLError, ex.ConnectTimeout)):
            return True
        if isinstance(e, ex.ConnectionError) and e.args:
            cause = e.args[0]
            if isinstance(cause, u.MaxRetryError):
                cause = cause.reason
            return isinstance(cause, (u.NewConnectionError, u.ConnectTimeoutError, u.SSLError))
        return False

    def close(self):
        if self.session is not None:
            self.session.close()


class _Httpx:
    """One httpx.Client; idle_s > 0 (httpx-fixed) sets keepalive_expiry."""

    def __init__(self, cfg, idle_s=0):
        import httpx
        self.httpx = httpx
        self.mode = "httpx-fixed" if idle_s else "httpx"
        cert = (cfg.client_cert, cfg.client_key) if cfg.client_cert else None
        kw = {}
        if idle_s:
            # httpx/_config.py's DEFAULT_LIMITS but for keepalive_expiry.
            kw["limits"] = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=idle_s)
        self.client = httpx.Client(verify=cfg.ca_file or True, cert=cert, timeout=cfg.response_timeout_ms / 1000, **kw)
        self.base = cfg.vendor_url
        self.version = httpx.__version__

    def request(self, method, path, headers, body):
        t0 = time.perf_counter()
        trace = {}
        try:
            r = self.client.request(method, self.base + path, content=body.encode(), headers=headers)
        except self.httpx.HTTPError as e:
            trace["total_ms"] = (time.perf_counter() - t0) * 1000
            before = isinstance(e, (self.httpx.ConnectError, self.httpx.ConnectTimeout, self.httpx.PoolTimeout))
            raise SendError("%s: %s" % (type(e).__name__, e), not before, trace) from None
        trace["total_ms"] = (time.perf_counter() - t0) * 1000
        trace["ttfb_ms"] = r.elapsed.total_seconds() * 1000
        return Answer(r.status_code, _lower(r.headers), r.text, trace)

    def close(self):
        self.client.close()


def new_client(cfg):
    """The client of cfg.client_mode (config.MODES)."""
    idle_s = cfg.client_idle_timeout_ms / 1000
    if cfg.client_mode == "httpx":
        return _Httpx(cfg)
    if cfg.client_mode == "httpx-fixed":
        return _Httpx(cfg, idle_s)
    if cfg.client_mode == "session-fixed":
        return _Requests(cfg, per_send=False, idle_s=idle_s)
    return _Requests(cfg, per_send=cfg.client_mode == "requests")
