package vendorapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// TokenPath is the vendor's token endpoint (docs/vendor-api.md).
const TokenPath = "/v1/token"

// DefaultTokenRefreshMargin is how long before its "expired" time a cached
// token is fetched anew, so a token never expires in flight. For a token
// that lives less than twice this margin, half its lifetime is used instead.
const DefaultTokenRefreshMargin = 30 * time.Second

// tokenResponse is the body of a 200 from POST /v1/token:
//
//	{"accesstoken": "eyJ...", "type": "Bearer", "expired": "2026-11-30T12:00:00+09:00"}
//
// "expired" is an RFC 3339 time (fractional seconds allowed). "type" must be
// "Bearer" (any case) or absent.
type tokenResponse struct {
	AccessToken string `json:"accesstoken"`
	Type        string `json:"type"`
	Expired     string `json:"expired"`
}

// Credentials authenticate the token call (HTTP Basic). String and GoString
// redact the secret, so %v and %#v never print it.
type Credentials struct{ ClientID, ClientSecret string }

// String returns "<client id>:<redacted>".
func (c Credentials) String() string { return c.ClientID + ":<redacted>" }

// GoString returns the same redacted form as String.
func (c Credentials) GoString() string { return "vendorapi.Credentials{" + c.String() + "}" }

// cachedToken is a bearer token and the time to fetch the next one.
type cachedToken struct {
	value     string
	refreshAt time.Time
}

// token returns a usable bearer token: the cached one while now is before
// its refresh time, otherwise a new one. fetched says a token call was made.
// Concurrent callers that find no usable token wait for one fetch.
func (c *Client) token(ctx context.Context) (tok string, fetched bool, serr *SendError) {
	if t, ok := c.cached(); ok {
		return t, false, nil
	}
	c.fetchMu.Lock()
	defer c.fetchMu.Unlock()
	if t, ok := c.cached(); ok {
		return t, false, nil // another Send fetched it meanwhile
	}
	tok, serr = c.fetchToken(ctx)
	return tok, true, serr
}

// cached returns the cached token while now is before its refresh time.
func (c *Client) cached() (string, bool) {
	c.mu.Lock()
	t := c.tok
	c.mu.Unlock()
	if t.value != "" && c.now().Before(t.refreshAt) {
		return t.value, true
	}
	return "", false
}

// dropToken forgets tok (after a 401), unless a newer one replaced it.
func (c *Client) dropToken(tok string) {
	c.mu.Lock()
	if c.tok.value == tok {
		c.tok = cachedToken{}
	}
	c.mu.Unlock()
}

// fetchToken calls POST /v1/token and caches the answer. Every failure is
// NotSent with Op OpToken: no message was sent. The token and the secret
// never appear in the error.
func (c *Client) fetchToken(ctx context.Context) (string, *SendError) {
	fail := func(code string, reason Reason, err error) *SendError {
		return &SendError{Class: outcome.NotSent, Op: OpToken, Code: code, Reason: reason, Err: err}
	}
	hc, release, err := c.strategy.Client()
	if err != nil {
		return "", fail("", reasonOf(err, nil), fmt.Errorf("get http client: %w", err))
	}
	defer release()

	tr := newTracer()
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, tr.clientTrace()),
		http.MethodPost, c.tokenURL, http.NoBody)
	if err != nil {
		return "", fail("", ReasonRequest, fmt.Errorf("build token request: %w", err))
	}
	req.SetBasicAuth(c.creds.ClientID, c.creds.ClientSecret)
	req.Header.Set("Accept", "application/json")

	start := c.now()
	resp, err := hc.Do(req)
	if err != nil {
		if IsHandshakeRefusal(err) {
			err = fmt.Errorf("%w: %w", ErrHandshakeRefused, err)
		}
		return "", fail("", reasonOf(err, tr), fmt.Errorf("post token: %w", err))
	}
	data, rerr := readBody(resp, c.maxBody)
	resp.Body.Close()
	status := strconv.Itoa(resp.StatusCode)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// A token answer carries no message data, so the vendor's (or the
		// proxy's) description may be shown: for example nginx's 421 "client
		// certificate required or not trusted" under mutual TLS.
		var mr messageResponse
		why := ""
		if json.Unmarshal(data, &mr) == nil && mr.Description != "" {
			why = fmt.Sprintf(" (%.120s)", mr.Description)
		}
		return "", fail(status, ReasonStatus, fmt.Errorf("post token: http status %d%s: %w", resp.StatusCode, why, ErrBadStatus))
	}
	if rerr != nil {
		return "", fail(status, reasonOf(rerr, tr), fmt.Errorf("read token response: %w", rerr))
	}
	var tr2 tokenResponse
	if err := json.Unmarshal(data, &tr2); err != nil {
		return "", fail(status, ReasonBody, fmt.Errorf("decode token response (%d bytes): %w", len(data), ErrBadResponse))
	}
	if tr2.AccessToken == "" {
		return "", fail(status, ReasonBody, fmt.Errorf("decode token response: no accesstoken: %w", ErrBadResponse))
	}
	if tr2.Type != "" && !strings.EqualFold(tr2.Type, "Bearer") {
		return "", fail(status, ReasonBody, fmt.Errorf("decode token response: type %q is not Bearer: %w", tr2.Type, ErrBadResponse))
	}
	exp, err := time.Parse(time.RFC3339, tr2.Expired)
	if err != nil {
		return "", fail(status, ReasonBody, fmt.Errorf("decode token response: expired is not RFC 3339: %w", ErrBadResponse))
	}

	margin := c.refreshMargin
	if life := exp.Sub(start); life < 2*margin {
		margin = life / 2
	}
	c.mu.Lock()
	c.tok = cachedToken{value: tr2.AccessToken, refreshAt: exp.Add(-margin)}
	c.mu.Unlock()
	return tr2.AccessToken, nil
}
