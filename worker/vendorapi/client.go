package vendorapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/message"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// MessagePath is the alimtalk vendor's send endpoint, DefaultAPI's
// SendPath (docs/vendor-api.md).
const MessagePath = "/v3/message"

// SuccessCode is the vendor's business code for an accepted message.
const SuccessCode = "1000"

// DefaultCorrelationHeader carries the refkey on every send so nginx can log
// it ($http_x_refkey). It is not an idempotency key.
const DefaultCorrelationHeader = "X-Refkey"

// DefaultMaxResponseBytes bounds how much of a response body is read (64
// KiB); a longer body is unparsable.
const DefaultMaxResponseBytes = 64 << 10

// flexString accepts a JSON string or number ("1000" or 1000).
type flexString string

// UnmarshalJSON implements json.Unmarshaler.
func (f *flexString) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*f = flexString(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*f = flexString(n.String())
	return nil
}

// Result is the outcome of one Send: on success the vendor's answer; on
// error Code (when the vendor answered) and Trace are still filled.
type Result struct {
	Code       string `json:"code"`       // vendor business code, "1000" when sent
	MessageKey string `json:"messagekey"` // vendor's id for the message
	Trace      Trace  `json:"trace"`
}

// Client calls the vendor API. One Client per worker; safe for concurrent
// Send (the worker's Config.Concurrency): the token is fetched by one Send
// at a time and shared, and Close may be called while Sends run.
type Client struct {
	creds         Credentials
	strategy      Strategy
	tokenURL      string
	messageURL    string
	initErr       error // bad base URL, nil strategy or bad API: every Send is NOT_SENT
	api           API   // after WithDefaults
	apiErr        error // api's Validate error
	idemHeader    string
	corrHeader    string
	now           func() time.Time
	refreshMargin time.Duration
	maxBody       int64
	table         StatusTable
	closed        atomic.Bool
	mu            sync.Mutex
	tok           cachedToken
	// fetchMu lets one Send fetch a token at a time; the others wait and
	// use it (N sends starting at once make one token call, not N).
	fetchMu sync.Mutex
}

// Option configures a Client.
type Option func(*Client)

// WithIdempotencyHeader makes every send carry header name = refkey. Only
// for vendors that de-duplicate on it: Go's transport replays a POST that
// carries Idempotency-Key / X-Idempotency-Key on its own (see the package
// doc). "" means no such header (the default).
func WithIdempotencyHeader(name string) Option {
	return func(c *Client) { c.idemHeader = http.CanonicalHeaderKey(name) }
}

// WithCorrelationHeader sets the header that carries the refkey for logs
// (default DefaultCorrelationHeader; nginx logs it). It is not an
// idempotency key: a name net/http treats as one (Idempotency-Key,
// X-Idempotency-Key) is refused and the default kept, so this option can
// never turn on transport replays. "" sends no correlation header.
func WithCorrelationHeader(name string) Option {
	return func(c *Client) {
		if isIdempotencyHeader(name) {
			return
		}
		c.corrHeader = http.CanonicalHeaderKey(name)
	}
}

// WithStatusTable sets the table that maps the vendor's HTTP statuses and
// business codes to outcomes (default DefaultStatusTable). A table that
// does not Validate is ignored and the default kept: load tables with
// LoadStatusTable, which reports what is wrong.
func WithStatusTable(t StatusTable) Option {
	return func(c *Client) {
		if t.Validate() == nil {
			c.table = t
		}
	}
}

// WithClock sets the clock used for token expiry and for a Retry-After
// date (tests; default time.Now).
func WithClock(now func() time.Time) Option {
	return func(c *Client) {
		if now != nil {
			c.now = now
		}
	}
}

// WithTokenRefreshMargin sets how long before expiry a token is fetched
// anew (default DefaultTokenRefreshMargin).
func WithTokenRefreshMargin(d time.Duration) Option {
	return func(c *Client) {
		if d >= 0 {
			c.refreshMargin = d
		}
	}
}

// isIdempotencyHeader reports whether net/http treats name as an
// idempotency key (net/http request.go, Request.isReplayable).
func isIdempotencyHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Idempotency-Key", "X-Idempotency-Key":
		return true
	}
	return false
}

// NewClient returns a client for the vendor at baseURL
// ("https://host[:port]", no path) that gets its *http.Client from s, for
// the API shape of WithAPI (default DefaultAPI). It does no I/O. A baseURL
// that does not parse as http(s)://host, a nil s or an API that does not
// Validate makes every Send fail NotSent with Reason ReasonRequest.
func NewClient(baseURL string, creds Credentials, s Strategy, opts ...Option) *Client {
	c := &Client{
		creds:         creds,
		strategy:      s,
		corrHeader:    DefaultCorrelationHeader,
		now:           time.Now,
		refreshMargin: DefaultTokenRefreshMargin,
		maxBody:       DefaultMaxResponseBytes,
		table:         DefaultStatusTable(),
		api:           DefaultAPI(),
	}
	for _, o := range opts {
		o(c)
	}
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	switch {
	case err != nil:
		c.initErr = fmt.Errorf("parse base url: %w", err)
	case (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		c.initErr = fmt.Errorf("parse base url %q: want https://host[:port]", baseURL)
	case s == nil:
		c.initErr = errNoStrategy
	case c.apiErr != nil:
		c.initErr = fmt.Errorf("configure vendor api: %w", c.apiErr)
	default:
		c.tokenURL = u.String() + c.api.TokenPath
		c.messageURL = u.String() + c.api.SendPath
	}
	return c
}

// String describes the client without its credentials or token.
func (c *Client) String() string {
	name := "<nil>"
	if c.strategy != nil {
		name = c.strategy.Name()
	}
	return fmt.Sprintf("vendorapi.Client{%s, strategy %s, %v}", c.messageURL, name, c.creds)
}

// Send POSTs n to /v3/message, fetching or refreshing the bearer token as
// needed (once at start, again when it is about to expire, one refetch on
// 401 followed by one retry of the send: a 401 means the vendor refused
// before processing). A nil error means SENT. Any other error is a
// *SendError:
//
//   - NotSent: the client is closed; the token call failed; or the request
//     provably never started to be written (dial, DNS, TLS handshake
//     failure, canceled before writing).
//   - NotSent also: the caller's WithBeforePost check refused a POST
//     (ErrRefusedBeforePost, Reason ReasonGated; a POST answered 401 before
//     it may have gone out, refused unprocessed).
//   - NotSent also: a status or business code the StatusTable maps to
//     NOT_SENT (by default 429 and 408: the vendor did not process it);
//     SendError.RetryAfter holds the vendor's Retry-After when it sent one.
//   - Unknown: any failure after the request started to be written (reset,
//     EOF, response timeout), a 5xx by default (a proxy's 502/504, the
//     vendor's 500/503: it may have been processed), a 1xx/3xx, or a 2xx
//     whose body does not parse.
//   - Rejected: a 4xx other than the table's NOT_SENT ones (a 401 after
//     the one refetch), or a business code other than the table's success
//     code. Code holds the vendor's code.
//
// Result.Trace is filled on error too (what httptrace saw before the
// failure); Result.Code holds the vendor's code whenever it answered.
func (c *Client) Send(ctx context.Context, n message.Notification) (Result, error) {
	var res Result
	if c.initErr != nil {
		return res, &SendError{Class: outcome.NotSent, Op: OpSend, Reason: ReasonRequest, Err: c.initErr}
	}
	if c.closed.Load() {
		return res, &SendError{Class: outcome.NotSent, Op: OpSend, Reason: ReasonClosed, Err: ErrClientClosed}
	}
	body, err := sendBody(c.api.RefKeyField, n)
	if err != nil {
		return res, &SendError{Class: outcome.NotSent, Op: OpSend, Reason: ReasonRequest, Err: fmt.Errorf("encode message: %w", err)}
	}

	tok, fetched, serr := c.token(ctx)
	if serr != nil {
		res.Trace.TokenFetched = true
		return res, serr
	}
	res, serr, unauthorized := c.post(ctx, tok, body, n.RefKey)
	if unauthorized {
		c.dropToken(tok)
		tok, terr := c.fetchToken(ctx)
		if terr != nil {
			// The 401 proves the first send was refused unprocessed,
			// and no second one went out.
			res.Trace.TokenFetched = true
			return res, terr
		}
		res, serr, _ = c.post(ctx, tok, body, n.RefKey)
		fetched = true
	}
	res.Trace.TokenFetched = fetched
	if serr != nil {
		return res, serr
	}
	return res, nil
}

// post makes one POST /v3/message call. unauthorized reports a 401 (the
// returned error is then the Rejected error to use if no retry is made).
func (c *Client) post(ctx context.Context, tok string, body []byte, refkey string) (res Result, serr *SendError, unauthorized bool) {
	hc, release, err := c.strategy.Client()
	if err != nil {
		return res, classifyTransport(OpSend, fmt.Errorf("get http client: %w", err), nil), false
	}
	defer release()

	tr := newTracer()
	defer func() { res.Trace = tr.snapshot() }()
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, tr.clientTrace()),
		http.MethodPost, c.messageURL, bytes.NewReader(body))
	if err != nil {
		return res, &SendError{Class: outcome.NotSent, Op: OpSend, Reason: ReasonRequest, Err: fmt.Errorf("build message request: %w", err)}, false
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.corrHeader != "" {
		req.Header.Set(c.corrHeader, refkey)
	}
	if c.idemHeader != "" {
		req.Header.Set(c.idemHeader, refkey)
	}

	// The caller's last look (WithBeforePost), as late as this package
	// can refuse without a byte of the request written.
	if serr := checkBeforePost(ctx); serr != nil {
		return res, serr, false
	}
	resp, err := hc.Do(req)
	if err != nil {
		tr.finish()
		return res, classifyTransport(OpSend, fmt.Errorf("post message: %w", err), tr), false
	}
	tr.setProto(resp.Proto)
	data, rerr := readBody(resp, c.maxBody)
	resp.Body.Close()
	tr.finish()
	res, serr = c.judge(resp.StatusCode, resp.Header, data, rerr, tr)
	return res, serr, resp.StatusCode == http.StatusUnauthorized
}

// judge classifies a response the vendor (or a proxy in front of it)
// answered with: status, headers, body (up to the limit) and the error
// reading it, by the client's StatusTable. A NOT_SENT answer carries the
// vendor's Retry-After, when it sent one, as SendError.RetryAfter.
func (c *Client) judge(status int, header http.Header, data []byte, readErr error, tr *tracer) (Result, *SendError) {
	var res Result
	var mr vendorAnswer
	parsed := false
	if readErr == nil {
		mr, parsed = parseAnswer(data, c.api.CodeField)
	}
	code := strconv.Itoa(status)
	if parsed && mr.Code != "" {
		code = string(mr.Code)
	}
	res.Code = code
	fail := func(class outcome.Outcome, reason Reason, err error) (Result, *SendError) {
		se := &SendError{Class: class, Op: OpSend, Code: code, Reason: reason, Err: err}
		if parsed {
			se.Description = mr.Description
		}
		if class == outcome.NotSent {
			if d, ok := ParseRetryAfter(header.Get("Retry-After"), c.now()); ok {
				se.RetryAfter = d
			}
		}
		return res, se
	}
	is2xx := status >= 200 && status <= 299
	if is2xx && readErr != nil {
		reason := reasonOf(readErr, tr)
		if errors.Is(readErr, ErrBadResponse) {
			reason = ReasonBody
		}
		return fail(outcome.Unknown, reason, fmt.Errorf("read message response: http status %d: %w", status, readErr))
	}
	if is2xx && (!parsed || mr.Code == "") {
		res.Code = strconv.Itoa(status)
		code = res.Code
		return fail(outcome.Unknown, ReasonBody, fmt.Errorf("decode message response (%d bytes, http status %d): %w", len(data), status, ErrBadResponse))
	}
	if parsed && mr.Code != "" {
		if o, ok := c.table.ForCode(string(mr.Code)); ok {
			return fail(o, ReasonBusiness, fmt.Errorf("business code %s (http status %d): %w", mr.Code, status, errFor(o)))
		}
	}
	if is2xx {
		if string(mr.Code) != c.table.SuccessCode {
			return fail(outcome.Rejected, ReasonBusiness, fmt.Errorf("business code %s: %w", mr.Code, ErrRejected))
		}
		res.MessageKey = mr.MessageKey
		return res, nil
	}
	reason := ReasonStatus
	if parsed && mr.Code != "" && status >= 400 && status <= 499 {
		reason = ReasonBusiness
	}
	// The table's default: a 5xx (a proxy's 502/504 says nothing about
	// whether the vendor processed the request, a vendor's 500 may come
	// after it stored the message) and 1xx/3xx (not answers this API gives;
	// redirects are not followed) are Unknown, the conservative choice.
	o := c.table.ForStatus(status)
	return fail(o, reason, fmt.Errorf("http status %d: %w", status, errFor(o)))
}

// errFor is the sentinel in the chain of a SendError of class o made from
// a vendor answer.
func errFor(o outcome.Outcome) error {
	switch o {
	case outcome.Rejected:
		return ErrRejected
	case outcome.NotSent:
		return ErrNotProcessed
	}
	return ErrBadStatus
}

// readBody reads up to max bytes of resp's body; a longer body is an
// ErrBadResponse.
func readBody(resp *http.Response, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return data, err
	}
	if int64(len(data)) > max {
		return data[:max], fmt.Errorf("response body over %d bytes: %w", max, ErrBadResponse)
	}
	return data, nil
}

// Close closes the strategy; later sends fail NotSent with ErrClientClosed
// and dial nothing. Safe to call twice.
func (c *Client) Close() error {
	c.closed.Store(true)
	if c.strategy == nil {
		return nil
	}
	if err := c.strategy.Close(); err != nil {
		return fmt.Errorf("close strategy: %w", err)
	}
	return nil
}
