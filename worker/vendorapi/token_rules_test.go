package vendorapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// TestRefusedTokenNeverReused: after a send answered 401 whose token
// refetch failed, the refused token is forgotten: the next Send fetches a
// new token before it sends, and no send carries the refused one again.
func TestRefusedTokenNeverReused(t *testing.T) {
	v := startPlainVendor(t)
	v.onToken = func(w http.ResponseWriter, n int64) {
		if n == 2 { // the refetch after the 401
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, `{"accesstoken":"tok-%d","type":"Bearer","expires_in":3600}`, n)
	}
	v.onMessage = func(w http.ResponseWriter, r *http.Request, _ int64) {
		if r.Header.Get("Authorization") == "Bearer tok-1" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprintf(w, `{"code":%q,"messagekey":"mk"}`, SuccessCode)
	}
	c := v.client(t)
	_, err := c.Send(context.Background(), note("ref-401"))
	if se := asSendError(t, err); se.Op != OpToken || se.Class != outcome.NotSent {
		t.Fatalf("first Send: %v; want the failed token refetch (NOT_SENT)", err)
	}
	res, err := c.Send(context.Background(), note("ref-401"))
	if err != nil || !res.Trace.TokenFetched {
		t.Fatalf("second Send: %v (token fetched %v); want SENT with a new token", err, res.Trace.TokenFetched)
	}
	close(v.bearers)
	var sent []string
	for b := range v.bearers {
		sent = append(sent, b)
	}
	if want := []string{"Bearer tok-1", "Bearer tok-3"}; fmt.Sprint(sent) != fmt.Sprint(want) {
		t.Errorf("sends carried %q; want %q (the refused tok-1 once)", sent, want)
	}
}

// TestTokenRefusalShowsDescription: a token call answered with a non-2xx
// status names the vendor's (or proxy's) description in the error; an
// answer without one adds nothing. The secret never shows.
func TestTokenRefusalShowsDescription(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"code":"421","description":"client certificate required or not trusted"}`, "http status 421 (client certificate required or not trusted): "},
		{`{"code":"421"}`, "http status 421: "},
	} {
		v := startPlainVendor(t)
		v.onToken = func(w http.ResponseWriter, _ int64) {
			w.WriteHeader(http.StatusMisdirectedRequest)
			io.WriteString(w, tc.body)
		}
		_, err := v.client(t).Send(context.Background(), note("ref-tok"))
		se := asSendError(t, err)
		if se.Op != OpToken || se.Class != outcome.NotSent || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), testSecret) {
			t.Errorf("token answer %s: %v; want a NOT_SENT token error saying %q", tc.body, err, tc.want)
		}
	}
}

// TestTokenLifetimeBound: expires_in up to one year (maxTokenLifetime,
// 31536000 s) is accepted; one second more is a broken answer.
func TestTokenLifetimeBound(t *testing.T) {
	for _, sec := range []int64{31536000, 31536001} {
		v := startPlainVendor(t)
		v.onToken = func(w http.ResponseWriter, _ int64) {
			fmt.Fprintf(w, `{"access_token":"a","token_type":"Bearer","expires_in":%d}`, sec)
		}
		v.onMessage = func(w http.ResponseWriter, _ *http.Request, _ int64) {
			fmt.Fprintf(w, `{"code":%q,"messagekey":"mk"}`, SuccessCode)
		}
		_, err := v.client(t).Send(context.Background(), note("ref-life"))
		if sec == 31536000 {
			if err != nil {
				t.Errorf("expires_in %d (one year): %v; want SENT", sec, err)
			}
			continue
		}
		if se := asSendError(t, err); se.Op != OpToken || !errors.Is(err, ErrBadResponse) || !strings.Contains(err.Error(), "<= 31536000") {
			t.Errorf("expires_in %d: %v; want a token ErrBadResponse naming the bound", sec, err)
		}
	}
}
