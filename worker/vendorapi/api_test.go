package vendorapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// smsAPI is the shape of the lab's second vendor profile
// (vendormock/profiles/sms/profile.yaml; docs/worker-contract.md).
var smsAPI = API{TokenPath: "/oauth2/token", TokenAuth: TokenAuthForm, SendPath: "/sms/v2/messages",
	RefKeyField: "client_ref", CodeField: "result_code"}

// smsTable is the sms profile's status table: success code "0", 429 not
// processed.
var smsTable = StatusTable{SuccessCode: "0", Statuses: map[string]outcome.Outcome{
	"429": outcome.NotSent, "4xx": outcome.Rejected, "5xx": outcome.Unknown,
}}

// smsVendor is a plain-HTTP httptest server speaking the sms shape: an
// OAuth2 client-credentials token call with a form body, then sends whose
// answer onSend writes (nil: 202 with result_code "0").
type smsVendor struct {
	srv       *httptest.Server
	tokenBody func(n int64) string // nil: access_token, token_type, expires_in 3600
	onSend    func(w http.ResponseWriter, body map[string]any)

	tokenCalls, sendCalls, otherCalls atomic.Int64

	mu        sync.Mutex
	forms     []url.Values // each token call's form
	tokenAuth []string     // each token call's Authorization header
	sendHdrs  []http.Header
	sendRaw   [][]byte
}

func startSMSVendor(t *testing.T) *smsVendor {
	t.Helper()
	v := &smsVendor{}
	v.srv = httptest.NewServer(http.HandlerFunc(v.serve))
	t.Cleanup(v.srv.Close)
	return v
}

func (v *smsVendor) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	switch {
	case r.Method == http.MethodPost && r.URL.Path == smsAPI.TokenPath:
		n := v.tokenCalls.Add(1)
		form, _ := url.ParseQuery(string(raw))
		v.mu.Lock()
		v.forms = append(v.forms, form)
		v.tokenAuth = append(v.tokenAuth, r.Header.Get("Authorization"))
		v.mu.Unlock()
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") ||
			form.Get("grant_type") != "client_credentials" ||
			form.Get("client_id") != testClientID || form.Get("client_secret") != testSecret {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"invalid_client"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if v.tokenBody != nil {
			io.WriteString(w, v.tokenBody(n))
			return
		}
		fmt.Fprintf(w, `{"access_token":"sms-tok-%d","token_type":"Bearer","expires_in":3600}`, n)
	case r.Method == http.MethodPost && r.URL.Path == smsAPI.SendPath:
		v.sendCalls.Add(1)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		v.mu.Lock()
		v.sendHdrs = append(v.sendHdrs, r.Header.Clone())
		v.sendRaw = append(v.sendRaw, raw)
		v.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if v.onSend != nil {
			v.onSend(w, body)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintf(w, `{"result_code":"0","message_id":"m-%v","client_ref":%q}`, body["client_ref"], body["client_ref"])
	default:
		v.otherCalls.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}
}

// newSMSClient builds a client for v on the named strategy.
func newSMSClient(t *testing.T, v *smsVendor, strategy string, opts ...Option) *Client {
	t.Helper()
	mk := Strategies()[strategy]
	c := NewClient(v.srv.URL, testCreds, mk(Config{ResponseTimeout: 3 * time.Second}), opts...)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestAPIFormTokenAndFields sends one message with the sms shape on both
// strategies: the token call is a form-encoded client-credentials grant
// without Basic auth, the send body carries the refkey under client_ref and
// not under refkey, the code is read from result_code. The negative
// control, the default API against the same server, reaches no endpoint.
func TestAPIFormTokenAndFields(t *testing.T) {
	for _, strategy := range []string{PooledName, PerRequestName} {
		t.Run(strategy, func(t *testing.T) {
			v := startSMSVendor(t)
			c := newSMSClient(t, v, strategy, WithAPI(smsAPI), WithStatusTable(smsTable), WithCorrelationHeader("X-Client-Ref"))
			res, err := c.Send(context.Background(), note("sms-ref-1"))
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			if res.Code != "0" || res.MessageKey != "m-sms-ref-1" || !res.Trace.TokenFetched {
				t.Errorf("result %+v; want code 0, message key m-sms-ref-1, token fetched", res)
			}
			v.mu.Lock()
			defer v.mu.Unlock()
			if len(v.forms) != 1 || v.tokenAuth[0] != "" {
				t.Fatalf("token calls %d, Authorization %q; want one call without Basic auth", len(v.forms), v.tokenAuth)
			}
			if len(v.sendRaw) != 1 {
				t.Fatalf("%d sends, want 1", len(v.sendRaw))
			}
			if got := v.sendHdrs[0].Get("Authorization"); got != "Bearer sms-tok-1" {
				t.Errorf("send Authorization %q; want the OAuth2 access token", got)
			}
			if got := v.sendHdrs[0].Get("X-Client-Ref"); got != "sms-ref-1" {
				t.Errorf("correlation header X-Client-Ref = %q; want the refkey", got)
			}
			want := `{"client_ref":"sms-ref-1","recipient":"` + testPhone + `","template_code":"SHIP_01","text":"Your order shipped","category":"info"}`
			if string(v.sendRaw[0]) != want {
				t.Errorf("send body %s; want %s", v.sendRaw[0], want)
			}
		})
	}
	t.Run("negative control: default API", func(t *testing.T) {
		v := startSMSVendor(t)
		c := newSMSClient(t, v, PooledName, WithStatusTable(smsTable))
		_, err := c.Send(context.Background(), note("sms-ref-2"))
		se := asSendError(t, err)
		if se.Class != outcome.NotSent || se.Op != OpToken || se.Code != "404" {
			t.Errorf("got %s op %s code %s; want NOT_SENT at the token call, 404 (%v)", se.Class, se.Op, se.Code, se)
		}
		if v.sendCalls.Load() != 0 || v.otherCalls.Load() != 1 {
			t.Errorf("sends %d, other calls %d; want 0 and 1 (/v1/token)", v.sendCalls.Load(), v.otherCalls.Load())
		}
	})
}

// TestSendBodyDefaultBytes pins the default body: the refkey first under
// "refkey", then the other keys, exactly the alimtalk body.
func TestSendBodyDefaultBytes(t *testing.T) {
	n := message.Notification{RefKey: "r\"1", Recipient: "+82", TemplateCode: "T", Text: "<hi>", Category: message.Ad}
	got, err := sendBody(DefaultRefKeyField, n)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"refkey":"r\"1","recipient":"+82","template_code":"T","text":"\u003chi\u003e","category":"ad"}`
	if string(got) != want {
		t.Errorf("body %s; want %s", got, want)
	}
	if !json.Valid(got) {
		t.Error("body is not valid JSON")
	}
}

// TestAPICodeField judges sms answers by result_code; an answer with the
// code under another key is not a readable 2xx (UNKNOWN), the negative
// control of the field's name.
func TestAPICodeField(t *testing.T) {
	cases := []struct {
		name       string
		status     int
		body       string
		retryAfter string
		want       outcome.Outcome
		wantCode   string
		wantRetry  time.Duration
	}{
		{name: "accepted", status: 202, body: `{"result_code":"0","message_id":"m"}`, want: outcome.Sent, wantCode: "0"},
		{name: "numeric code accepted", status: 202, body: `{"result_code":0}`, want: outcome.Sent, wantCode: "0"},
		{name: "business rejection in a 200", status: 200, body: `{"result_code":"E201","message":"recipient not reachable"}`, want: outcome.Rejected, wantCode: "E201"},
		{name: "429 with Retry-After", status: 429, body: `{"result_code":"E429"}`, retryAfter: "1", want: outcome.NotSent, wantCode: "E429", wantRetry: time.Second},
		{name: "code under the default key is not read", status: 202, body: `{"code":"0"}`, want: outcome.Unknown, wantCode: "202"},
		{name: "alimtalk success code is not success here", status: 200, body: `{"result_code":"1000"}`, want: outcome.Rejected, wantCode: "1000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := startSMSVendor(t)
			v.onSend = func(w http.ResponseWriter, _ map[string]any) {
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}
			c := newSMSClient(t, v, PooledName, WithAPI(smsAPI), WithStatusTable(smsTable))
			res, err := c.Send(context.Background(), note("sms-code"))
			if got := ClassOf(err); got != tc.want {
				t.Fatalf("class %s; want %s (err %v)", got, tc.want, err)
			}
			if res.Code != tc.wantCode {
				t.Errorf("code %q; want %q", res.Code, tc.wantCode)
			}
			if tc.want == outcome.NotSent {
				if se := asSendError(t, err); se.RetryAfter != tc.wantRetry {
					t.Errorf("RetryAfter %v; want %v", se.RetryAfter, tc.wantRetry)
				}
			}
			if n := v.sendCalls.Load(); n != 1 {
				t.Errorf("%d sends; want exactly 1 (never re-sent by the client)", n)
			}
		})
	}
}

// TestTokenExpiresIn: an OAuth2 token is kept for expires_in seconds less
// the refresh margin, counted from the call; both answer shapes are read
// with either authentication; an answer without a usable expiry is
// NOT_SENT at the token call, before any send.
func TestTokenExpiresIn(t *testing.T) {
	t.Run("refresh after expires_in less the margin", func(t *testing.T) {
		clk := &clock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
		v := startSMSVendor(t)
		v.tokenBody = func(n int64) string {
			return fmt.Sprintf(`{"access_token":"sms-tok-%d","token_type":"bearer","expires_in":120}`, n)
		}
		c := newSMSClient(t, v, PooledName, WithAPI(smsAPI), WithStatusTable(smsTable), WithClock(clk.now))
		send := func() {
			t.Helper()
			if _, err := c.Send(context.Background(), note("sms-exp")); err != nil {
				t.Fatalf("Send: %v", err)
			}
		}
		send()
		clk.add(89 * time.Second) // 120 s less the 30 s margin is 90 s
		send()
		if n := v.tokenCalls.Load(); n != 1 {
			t.Fatalf("token calls after 89 s: %d; want 1 (still valid)", n)
		}
		clk.add(2 * time.Second)
		send()
		if n := v.tokenCalls.Load(); n != 2 {
			t.Errorf("token calls after 91 s: %d; want 2 (refreshed)", n)
		}
	})
	cases := []struct {
		name, body string
		wantErr    string // "" = Sent
	}{
		{name: "alimtalk answer to a form call", body: `{"accesstoken":"a","type":"Bearer","expired":"2099-01-01T00:00:00Z"}`},
		{name: "expires_in as a string number", body: `{"access_token":"a","expires_in":"60"}`},
		{name: "no expiry", body: `{"access_token":"a","token_type":"Bearer"}`, wantErr: "expired is not RFC 3339 (and no expires_in)"},
		{name: "zero expires_in", body: `{"access_token":"a","expires_in":0}`, wantErr: "expires_in 0: want seconds"},
		{name: "negative expires_in", body: `{"access_token":"a","expires_in":-5}`, wantErr: "expires_in -5"},
		{name: "no token", body: `{"token_type":"Bearer","expires_in":60}`, wantErr: "no accesstoken or access_token"},
		{name: "not bearer", body: `{"access_token":"a","token_type":"mac","expires_in":60}`, wantErr: `type "mac" is not Bearer`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := startSMSVendor(t)
			v.tokenBody = func(int64) string { return tc.body }
			c := newSMSClient(t, v, PooledName, WithAPI(smsAPI), WithStatusTable(smsTable))
			_, err := c.Send(context.Background(), note("sms-tok"))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Send: %v", err)
				}
				return
			}
			se := asSendError(t, err)
			if se.Class != outcome.NotSent || se.Op != OpToken || se.Reason != ReasonBody || !errors.Is(err, ErrBadResponse) {
				t.Errorf("got %s op %s reason %s; want NOT_SENT token body ErrBadResponse (%v)", se.Class, se.Op, se.Reason, err)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q; want it to say %q", err, tc.wantErr)
			}
			if v.sendCalls.Load() != 0 {
				t.Error("a send went out after a bad token answer")
			}
		})
	}
}

// TestAPIValidate: a bad shape is named with what is allowed, and a client
// built with it sends nothing; the default, the empty and the sms shapes
// are valid (the negative control).
func TestAPIValidate(t *testing.T) {
	for _, a := range []API{{}, DefaultAPI(), smsAPI} {
		if err := a.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v; want nil", a, err)
		}
	}
	cases := []struct {
		name string
		api  API
		want []string
	}{
		{name: "unknown token auth", api: API{TokenAuth: "oauth2"}, want: []string{`token auth "oauth2"`, "known: basic", "form"}},
		{name: "relative token path", api: API{TokenPath: "oauth2/token"}, want: []string{`token path "oauth2/token"`, "absolute path"}},
		{name: "send path with a query", api: API{SendPath: "/send?x=1"}, want: []string{`send path "/send?x=1"`}},
		{name: "refkey field collides", api: API{RefKeyField: "text"}, want: []string{`refkey field "text"`, "already a key"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.api.Validate()
			if !errors.Is(err, ErrAPI) {
				t.Fatalf("Validate = %v; want ErrAPI", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q; want it to say %q", err, w)
				}
			}
			v := startSMSVendor(t)
			c := newSMSClient(t, v, PooledName, WithAPI(tc.api))
			_, serr := c.Send(context.Background(), note("sms-bad-api"))
			se := asSendError(t, serr)
			if se.Class != outcome.NotSent || se.Reason != ReasonRequest || !errors.Is(serr, ErrAPI) {
				t.Errorf("Send = %s/%s %v; want NOT_SENT/request wrapping ErrAPI", se.Class, se.Reason, serr)
			}
			if n := v.tokenCalls.Load() + v.sendCalls.Load() + v.otherCalls.Load(); n != 0 {
				t.Errorf("%d requests reached the vendor; want none", n)
			}
		})
	}
}
