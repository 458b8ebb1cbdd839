package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The gateway fetches a token once, sends, and classifies the answer:
// success, a retryable 503, a business rejection, a timeout (retried:
// the worker cannot tell whether the gateway got the request).
func TestGatewayClassifies(t *testing.T) {
	var tokens, sends int
	answer := func(w http.ResponseWriter) { w.WriteHeader(http.StatusOK); _, _ = w.Write([]byte(`{"code":"1000"}`)) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/token":
			tokens++
			_, _ = w.Write([]byte(`{"accesstoken":"t1"}`))
		case "/v3/message":
			sends++
			switch sends {
			case 1:
				answer(w)
			case 2:
				w.WriteHeader(http.StatusServiceUnavailable)
			case 3:
				_, _ = w.Write([]byte(`{"code":"3018"}`))
			default:
				time.Sleep(300 * time.Millisecond)
				answer(w)
			}
		}
	}))
	defer srv.Close()
	c := config{gatewayURL: srv.URL, tokenPath: "/v1/token", sendPath: "/v3/message", refField: "refkey",
		codeField: "code", okCode: "1000", timeout: 100 * time.Millisecond}
	gw := newGateway(c, nil)
	m := message{NotificationID: "n-1"}
	for i, want := range []struct{ ok, retry bool }{{true, false}, {false, true}, {false, false}, {false, true}} {
		got := gw.send(context.Background(), m)
		if got.ok != want.ok || got.retry != want.retry {
			t.Fatalf("send %d: %+v, want ok=%t retry=%t", i+1, got, want.ok, want.retry)
		}
	}
	if tokens != 1 {
		t.Fatalf("%d token calls, want 1", tokens)
	}
}
