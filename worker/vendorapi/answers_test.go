package vendorapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// plainVendor is a plain-HTTP vendor with the default API: token answers
// a valid token (tok-1, tok-2, ...) unless onToken writes one, and
// onMessage writes each send's answer.
type plainVendor struct {
	srv                   *httptest.Server
	onToken               func(w http.ResponseWriter, n int64) // nil: 200 and a valid token
	onMessage             func(w http.ResponseWriter, r *http.Request, n int64)
	tokenCalls, sendCalls atomic.Int64
	bearers               chan string // each send's Authorization header
}

func startPlainVendor(t *testing.T) *plainVendor {
	t.Helper()
	v := &plainVendor{bearers: make(chan string, 16)}
	v.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case TokenPath:
			n := v.tokenCalls.Add(1)
			if v.onToken != nil {
				v.onToken(w, n)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"accesstoken":"tok-%d","type":"Bearer","expired":%q}`, n, time.Now().Add(time.Hour).Format(time.RFC3339))
		case MessagePath:
			n := v.sendCalls.Add(1)
			v.bearers <- r.Header.Get("Authorization")
			v.onMessage(w, r, n)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(v.srv.Close)
	return v
}

func (v *plainVendor) client(t *testing.T, opts ...Option) *Client {
	t.Helper()
	c := NewClient(v.srv.URL, testCreds, NewPooled(Config{ResponseTimeout: 3 * time.Second}), opts...)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestEvery2xxIsAnAnswer: a token call or a send answered with any 2xx
// status (200 to 299) is read as the vendor's answer; 299 is the edge.
// Below and above that range the send is judged by the status table
// (300: UNKNOWN; docs/outcomes.md).
func TestEvery2xxIsAnAnswer(t *testing.T) {
	for _, st := range []int{200, 299, 300} {
		t.Run(fmt.Sprint(st), func(t *testing.T) {
			v := startPlainVendor(t)
			v.onToken = func(w http.ResponseWriter, n int64) {
				w.WriteHeader(st)
				fmt.Fprintf(w, `{"accesstoken":"tok-%d","type":"Bearer","expired":%q}`, n, time.Now().Add(time.Hour).Format(time.RFC3339))
			}
			v.onMessage = func(w http.ResponseWriter, _ *http.Request, _ int64) {
				w.WriteHeader(st)
				fmt.Fprintf(w, `{"code":%q,"description":"success","messagekey":"mk-1"}`, SuccessCode)
			}
			c := v.client(t)
			res, err := c.Send(context.Background(), note("ref-2xx"))
			if st <= 299 {
				if err != nil || res.MessageKey != "mk-1" {
					t.Fatalf("token and send answered %d: %v (message key %q); want SENT with mk-1", st, err, res.MessageKey)
				}
				return
			}
			// 300 as a token answer fails the token call: no send at all.
			se := asSendError(t, err)
			if se.Class != outcome.NotSent || se.Op != OpToken || v.sendCalls.Load() != 0 {
				t.Errorf("token answered 300: %v (op %s), %d sends; want a NOT_SENT token error and no send", err, se.Op, v.sendCalls.Load())
			}
		})
	}
}

// TestBusinessCodeOn4xxIsABusinessRefusal: a 4xx answer (400 to 499) that
// carries a vendor business code not named in the status table is judged
// by its status, with Reason business (the vendor's application spoke); a
// 5xx with a code is Reason status.
func TestBusinessCodeOn4xxIsABusinessRefusal(t *testing.T) {
	for _, tc := range []struct {
		status     int
		wantClass  outcome.Outcome
		wantReason Reason
	}{
		{400, outcome.Rejected, ReasonBusiness},
		{499, outcome.Rejected, ReasonBusiness},
		{500, outcome.Unknown, ReasonStatus},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			v := startPlainVendor(t)
			v.onMessage = func(w http.ResponseWriter, _ *http.Request, _ int64) {
				w.WriteHeader(tc.status)
				io.WriteString(w, `{"code":"3999","description":"refused"}`)
			}
			_, err := v.client(t).Send(context.Background(), note("ref-4xx"))
			se := asSendError(t, err)
			if se.Class != tc.wantClass || se.Reason != tc.wantReason || se.Code != "3999" {
				t.Errorf("status %d with code 3999: class %s reason %s code %s; want %s, %s, 3999", tc.status, se.Class, se.Reason, se.Code, tc.wantClass, tc.wantReason)
			}
		})
	}
}

// TestResponseBodyLimit: an answer of exactly DefaultMaxResponseBytes is
// read whole (SENT); one byte more is ErrBadResponse ("over ... bytes"),
// UNKNOWN for a 2xx.
func TestResponseBodyLimit(t *testing.T) {
	answer := fmt.Sprintf(`{"code":%q,"description":"success","messagekey":"mk-1"}`, SuccessCode)
	for _, size := range []int{DefaultMaxResponseBytes, DefaultMaxResponseBytes + 1} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			v := startPlainVendor(t)
			v.onMessage = func(w http.ResponseWriter, _ *http.Request, _ int64) {
				io.WriteString(w, answer+strings.Repeat(" ", size-len(answer)))
			}
			res, err := v.client(t).Send(context.Background(), note("ref-big"))
			if size == DefaultMaxResponseBytes {
				if err != nil || res.MessageKey != "mk-1" {
					t.Fatalf("answer of %d bytes: %v (message key %q); want SENT", size, err, res.MessageKey)
				}
				return
			}
			se := asSendError(t, err)
			want := fmt.Sprintf("over %d bytes", DefaultMaxResponseBytes)
			if se.Class != outcome.Unknown || !errors.Is(err, ErrBadResponse) || !strings.Contains(err.Error(), want) {
				t.Errorf("answer of %d bytes: %v (class %s); want UNKNOWN, ErrBadResponse, %q", size, err, se.Class, want)
			}
		})
	}
}
