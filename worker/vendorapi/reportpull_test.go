package vendorapi

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// startReports serves GET report requests with answer (TLS, the lab
// certificate) and records their path and Authorization header.
func startReports(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) (*httptest.Server, *[]string) {
	t.Helper()
	lab, _ := pkis(t)
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.EscapedPath()+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		answer(w, r)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{lab.leaf}}
	srv.Config.ErrorLog = quietLog()
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestPullReport(t *testing.T) {
	spec, err := ParseReportSpec(alimtalkReports)
	if err != nil {
		t.Fatal(err)
	}
	v := startVendor(t)
	reports, seen := startReports(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.EscapedPath(), "/a%2Fb"):
			io.WriteString(w, `{"refkey":"a/b","status":"FAILED","code":"3015"}`)
		case strings.HasSuffix(r.URL.Path, "/other"):
			io.WriteString(w, `{"refkey":"not-other","status":"DELIVERED"}`)
		case strings.HasSuffix(r.URL.Path, "/garbled"):
			io.WriteString(w, `{"refkey":"garbled","status":"MAYBE"}`)
		case strings.HasSuffix(r.URL.Path, "/busy"):
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	})
	// Per-request: dial 1 is the token call (the fake vendor), every later
	// dial a report request.
	d := &dialer{route: firstThen(v.addr(), reports.Listener.Addr().String())}
	c := newTestClient(t, PerRequestName, baseConfig(t, d))
	ctx := context.Background()

	rep, found, err := c.PullReport(ctx, spec, "a/b")
	if err != nil || !found || rep != (Report{RefKey: "a/b", Result: "FAILED", Kind: ReportFailed, Code: "3015"}) {
		t.Fatalf("PullReport(a/b) = %+v, %v, %v; want the FAILED report", rep, found, err)
	}
	if got := (*seen)[0]; got != "GET /v3/report/a%2Fb Bearer tok-1" {
		t.Errorf("request = %q; want GET /v3/report/a%%2Fb with the send's bearer token", got)
	}
	if _, found, err := c.PullReport(ctx, spec, "none-yet"); err != nil || found {
		t.Errorf("PullReport(404) = %v, %v; want not found, no error", found, err)
	}
	for _, k := range []string{"other", "garbled"} {
		if _, found, err := c.PullReport(ctx, spec, k); !errors.Is(err, ErrMalformedReport) || found {
			t.Errorf("PullReport(%s) = %v, %v; want ErrMalformedReport", k, found, err)
		}
	}
	if _, _, err := c.PullReport(ctx, spec, "busy"); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("PullReport(503) = %v; want an error naming 503", err)
	}
	noPull := spec
	noPull.Pull = nil
	if _, _, err := c.PullReport(ctx, noPull, "x"); !errors.Is(err, ErrNoPull) {
		t.Errorf("PullReport without a pull endpoint = %v; want ErrNoPull", err)
	}
	if n := v.messageCalls.Load(); n != 0 {
		t.Errorf("%d sends; a pull sends nothing", n)
	}
}
