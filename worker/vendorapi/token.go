package vendorapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// TokenPath is the alimtalk vendor's token endpoint, DefaultAPI's
// TokenPath (docs/vendor-api.md).
const TokenPath = "/v1/token"

// DefaultTokenRefreshMargin is how long before its "expired" time a cached
// token is fetched anew, so a token never expires in flight. For a token
// that lives less than twice this margin, half its lifetime is used instead.
const DefaultTokenRefreshMargin = 30 * time.Second

// tokenResponse is the body of a 200 from the token call, in either of two
// shapes: the alimtalk vendor's (docs/vendor-api.md#token)
//
//	{"accesstoken": "eyJ...", "type": "Bearer", "expired": "2026-11-30T12:00:00+09:00"}
//
// with "expired" an RFC 3339 time (fractional seconds allowed), or OAuth2's
// (RFC 6749 section 5.1)
//
//	{"access_token": "eyJ...", "token_type": "Bearer", "expires_in": 3600}
//
// with "expires_in" the lifetime in seconds from the answer. The type must
// be "Bearer" (any case) or absent. When both shapes' keys are present the
// alimtalk ones win.
type tokenResponse struct {
	AccessToken  string       `json:"accesstoken"`
	Type         string       `json:"type"`
	Expired      string       `json:"expired"`
	OAuthToken   string       `json:"access_token"`
	OAuthType    string       `json:"token_type"`
	ExpiresInSec *json.Number `json:"expires_in"`
}

// parse returns the token and its expiry; start is when the call was made
// (expires_in counts from it). Errors name the missing or bad key and wrap
// ErrBadResponse; they never hold the token.
func (t tokenResponse) parse(start time.Time) (string, time.Time, error) {
	tok, typ := t.AccessToken, t.Type
	if tok == "" {
		tok = t.OAuthToken
	}
	if typ == "" {
		typ = t.OAuthType
	}
	if tok == "" {
		return "", time.Time{}, fmt.Errorf("decode token response: no accesstoken or access_token: %w", ErrBadResponse)
	}
	if typ != "" && !strings.EqualFold(typ, "Bearer") {
		return "", time.Time{}, fmt.Errorf("decode token response: type %q is not Bearer: %w", typ, ErrBadResponse)
	}
	if t.Expired != "" || t.ExpiresInSec == nil {
		exp, err := time.Parse(time.RFC3339, t.Expired)
		if err != nil {
			return "", time.Time{}, fmt.Errorf("decode token response: expired is not RFC 3339 (and no expires_in): %w", ErrBadResponse)
		}
		return tok, exp, nil
	}
	sec, err := t.ExpiresInSec.Float64()
	if err != nil || sec <= 0 || sec > maxTokenLifetime.Seconds() {
		return "", time.Time{}, fmt.Errorf("decode token response: expires_in %s: want seconds, > 0 and <= %d: %w",
			t.ExpiresInSec.String(), int64(maxTokenLifetime.Seconds()), ErrBadResponse)
	}
	return tok, start.Add(time.Duration(sec * float64(time.Second))), nil
}

// maxTokenLifetime bounds an expires_in (one year): a larger one is taken
// for a broken answer rather than a token to keep forever.
const maxTokenLifetime = 365 * 24 * time.Hour

// Credentials authenticate the token call (HTTP Basic, or the form body of
// TokenAuthForm). String and GoString
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

// fetchToken calls the token endpoint (API.TokenPath, authenticated as
// API.TokenAuth says) and caches the answer. Every failure is
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
	var body io.Reader = http.NoBody
	if c.api.TokenAuth == TokenAuthForm {
		body = strings.NewReader(url.Values{
			"grant_type":    {"client_credentials"},
			"client_id":     {c.creds.ClientID},
			"client_secret": {c.creds.ClientSecret},
		}.Encode())
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, tr.clientTrace()),
		http.MethodPost, c.tokenURL, body)
	if err != nil {
		return "", fail("", ReasonRequest, fmt.Errorf("build token request: %w", err))
	}
	if c.api.TokenAuth == TokenAuthForm {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req.SetBasicAuth(c.creds.ClientID, c.creds.ClientSecret)
	}
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
		why := ""
		if mr, ok := parseAnswer(data, c.api.CodeField); ok && mr.Description != "" {
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
	tok, exp, err := tr2.parse(start)
	if err != nil {
		return "", fail(status, ReasonBody, err)
	}

	margin := c.refreshMargin
	if life := exp.Sub(start); life < 2*margin {
		margin = life / 2
	}
	c.mu.Lock()
	c.tok = cachedToken{value: tok, refreshAt: exp.Add(-margin)}
	c.mu.Unlock()
	return tok, nil
}
