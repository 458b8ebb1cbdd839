package vendorapi

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// errShut is the check's refusal in TestBeforePost.
var errShut = errors.New("shut")

// TestBeforePost: the check given with WithBeforePost runs right before
// each message POST (after the token call, and again before the resend
// after a 401's refetch), never before a token call. When it refuses,
// that POST is not made and Send is NOT_SENT with ErrRefusedBeforePost and
// the check's error in its chain. The clock moves inside a token call
// (shut from then on): the first POST after it is refused. Controls: the
// same Send with a check that still allows, and with no check at all, is
// sent.
func TestBeforePost(t *testing.T) {
	unauthorizedFirst := func(w http.ResponseWriter, r *http.Request, n int64) {
		if n == 1 {
			answer(w, http.StatusUnauthorized, "401", r)
			return
		}
		answer(w, http.StatusOK, SuccessCode, r)
	}
	for _, strategy := range []string{PooledName, PerRequestName} {
		for _, tc := range []struct {
			name       string
			shutOn     int64 // the token call that moves the clock past the close; 0 = none
			noCheck    bool
			onMessage  func(w http.ResponseWriter, r *http.Request, n int64)
			sent       bool
			wantPosts  int64
			wantTokens int64
			wantChecks []int64 // token calls made by each check call
		}{
			{name: "token call crosses the close", shutOn: 1, wantPosts: 0, wantTokens: 1, wantChecks: []int64{1}},
			{name: "refetch after 401 crosses the close", shutOn: 2, onMessage: unauthorizedFirst,
				wantPosts: 1, wantTokens: 2, wantChecks: []int64{1, 2}},
			{name: "control: check allows", sent: true, wantPosts: 1, wantTokens: 1, wantChecks: []int64{1}},
			{name: "control: check allows after a 401", onMessage: unauthorizedFirst, sent: true,
				wantPosts: 2, wantTokens: 2, wantChecks: []int64{1, 2}},
			{name: "control: no check, token call crosses the close", shutOn: 1, noCheck: true, sent: true,
				wantPosts: 1, wantTokens: 1},
		} {
			t.Run(strategy+"/"+tc.name, func(t *testing.T) {
				closeAt := time.Date(2026, 11, 30, 20, 50, 0, 0, time.UTC)
				clk := &clock{t: closeAt.Add(-time.Second)}
				v := startVendor(t)
				v.onMessage = tc.onMessage
				v.onToken = func(n int64) {
					if n == tc.shutOn {
						clk.add(2 * time.Second)
					}
				}
				c := newTestClient(t, strategy, baseConfig(t, &dialer{route: to(v.addr())}))
				var mu sync.Mutex
				var checks []int64
				ctx := context.Background()
				if !tc.noCheck {
					ctx = WithBeforePost(ctx, func() error {
						mu.Lock()
						checks = append(checks, v.tokenCalls.Load())
						mu.Unlock()
						if !clk.now().Before(closeAt) {
							return errShut
						}
						return nil
					})
				}
				res, err := c.Send(ctx, note("ref-gate"))
				if posts, tokens := v.messageCalls.Load(), v.tokenCalls.Load(); posts != tc.wantPosts || tokens != tc.wantTokens {
					t.Errorf("vendor saw %d message POSTs and %d token calls, want %d and %d", posts, tokens, tc.wantPosts, tc.wantTokens)
				}
				mu.Lock()
				if !slices.Equal(checks, tc.wantChecks) {
					t.Errorf("checks ran after token calls %v, want %v (one right before each POST)", checks, tc.wantChecks)
				}
				mu.Unlock()
				if tc.sent {
					if err != nil || res.Code != SuccessCode {
						t.Fatalf("send: code %q err %v, want sent", res.Code, err)
					}
					return
				}
				se := asSendError(t, err)
				if se.Class != outcome.NotSent || se.Op != OpSend || se.Reason != ReasonGated || se.Code != "" {
					t.Errorf("got %s op %s reason %q code %q, want NOT_SENT send gated, no code (%v)", se.Class, se.Op, se.Reason, se.Code, se)
				}
				if !errors.Is(err, ErrRefusedBeforePost) || !errors.Is(err, errShut) {
					t.Errorf("error %v: want ErrRefusedBeforePost and the check's error in its chain", err)
				}
				if ClassOf(err) != outcome.NotSent || !res.Trace.TokenFetched || res.Trace.WroteRequest {
					t.Errorf("class %s trace %+v: want NOT_SENT, token fetched, nothing written", ClassOf(err), res.Trace)
				}
			})
		}
	}
}
