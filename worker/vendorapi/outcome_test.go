package vendorapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// rig is one fault case's world: the client under test and the servers
// behind it.
type rig struct {
	c   *Client
	d   *dialer
	v   *fakeVendor // the good vendor (token calls), or nil
	raw *rawServer  // the faulty server, or nil
	dns *fakeDNS
}

// newRig builds a client on strategy whose dials follow route.
func newRig(t *testing.T, strategy string, route func(int64) string, mod func(*Config), opts ...Option) *rig {
	t.Helper()
	d := &dialer{route: route}
	cfg := baseConfig(t, d)
	if mod != nil {
		mod(&cfg)
	}
	return &rig{c: newTestClient(t, strategy, cfg, opts...), d: d}
}

// vendorRig starts a fake vendor and a client pointed at it.
func vendorRig(t *testing.T, strategy string, onMessage func(http.ResponseWriter, *http.Request, int64), mod func(*Config)) *rig {
	t.Helper()
	v := startVendor(t)
	v.onMessage = onMessage
	r := newRig(t, strategy, to(v.addr()), mod)
	r.v = v
	return r
}

// status answers a message call with an HTTP status and a body.
func status(code int, body string) func(http.ResponseWriter, *http.Request, int64) {
	return func(w http.ResponseWriter, _ *http.Request, _ int64) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

type faultCase struct {
	name       string
	setup      func(t *testing.T) *rig
	warm       bool // one successful send first (token cached, connection pooled)
	wantClass  outcome.Outcome
	wantOp     string
	wantReason Reason
	wantCode   string
	check      func(t *testing.T, r *rig, res Result, se *SendError)
}

// TestClassification covers every classification branch, each against a real
// local server doing the fault.
func TestClassification(t *testing.T) {
	_, other := pkis(t)
	cases := classificationCases(other)

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.setup(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if tc.warm {
				if _, err := r.c.Send(ctx, note("warm-up")); err != nil {
					t.Fatalf("warm-up send: %v", err)
				}
			}
			if tc.wantReason == ReasonCanceled {
				var c2 context.CancelFunc
				ctx, c2 = context.WithCancel(ctx)
				c2()
			}
			res, err := r.c.Send(ctx, note("ref-"+strings.ReplaceAll(tc.name, " ", "-")))
			if got := ClassOf(err); got != tc.wantClass {
				t.Fatalf("ClassOf = %s, want %s (err: %v)", got, tc.wantClass, err)
			}
			var se *SendError
			if tc.wantClass == outcome.Sent {
				if err != nil {
					t.Fatalf("Send: %v", err)
				}
			} else {
				se = asSendError(t, err)
				if se.Op != tc.wantOp || se.Reason != tc.wantReason {
					t.Errorf("op %q reason %q, want %q %q (err: %v)", se.Op, se.Reason, tc.wantOp, tc.wantReason, err)
				}
				if se.Code != tc.wantCode {
					t.Errorf("Code = %q, want %q", se.Code, tc.wantCode)
				}
				for _, secret := range []string{testSecret, testPhone, "Bearer", "tok-"} {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("error text holds %q: %s", secret, err)
					}
				}
			}
			if tc.wantCode != "" && res.Code != tc.wantCode && tc.wantOp != OpToken {
				t.Errorf("Result.Code = %q, want %q", res.Code, tc.wantCode)
			}
			// The trace and the class must agree: a send NotSent never
			// started to be written; an Unknown one did.
			if se != nil && se.Op == OpSend {
				switch se.Class {
				case outcome.NotSent:
					if res.Trace.WriteStarted {
						t.Errorf("NOT_SENT but Trace.WriteStarted: %+v", res.Trace)
					}
				case outcome.Unknown:
					if !res.Trace.WriteStarted {
						t.Errorf("UNKNOWN but not Trace.WriteStarted: %+v", res.Trace)
					}
				}
			}
			if tc.check != nil {
				tc.check(t, r, res, se)
			}
		})
	}
}

// expectBadStatusOnce checks a 5xx was not retried and is ErrBadStatus.
func expectBadStatusOnce(t *testing.T, r *rig, _ Result, se *SendError) {
	t.Helper()
	if !errors.Is(se, ErrBadStatus) {
		t.Errorf("want ErrBadStatus in chain, got %v", se)
	}
	if n := r.v.messageCalls.Load(); n != 1 {
		t.Errorf("vendor saw %d message calls, want 1 (never re-sent)", n)
	}
}

func TestClassOf(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want outcome.Outcome
	}{
		{"nil is sent", nil, outcome.Sent},
		{"send error", &SendError{Class: outcome.NotSent}, outcome.NotSent},
		{"wrapped send error", fmt.Errorf("handle: %w", &SendError{Class: outcome.Rejected}), outcome.Rejected},
		{"other error is unknown", errors.New("boom"), outcome.Unknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClassOf(tc.err); got != tc.want {
				t.Errorf("ClassOf(%v) = %s, want %s", tc.err, got, tc.want)
			}
		})
	}
}

func TestSendErrorText(t *testing.T) {
	err := &SendError{Class: outcome.Unknown, Op: OpSend, Code: "502", Reason: ReasonStatus, Description: testPhone, Err: ErrBadStatus}
	want := "vendor send: UNKNOWN (status) code 502: unexpected http status"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}
