package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// upstream is a plain-HTTP vendor: it counts the send bodies it received
// per refkey and accepts each one (the vendor HAS it).
type upstream struct {
	mu       sync.Mutex
	received map[string]int
}

func startUpstream(t *testing.T) (*upstream, string) {
	u := &upstream{received: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+vendorapi.TokenPath, func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"accesstoken": "t", "type": "Bearer",
			"expired": time.Now().Add(time.Hour).Format(time.RFC3339)})
	})
	mux.HandleFunc("POST "+vendorapi.MessagePath, func(w http.ResponseWriter, r *http.Request) {
		var m struct{ RefKey string }
		json.NewDecoder(r.Body).Decode(&m)
		u.mu.Lock()
		u.received[m.RefKey]++
		u.mu.Unlock()
		json.NewEncoder(w).Encode(map[string]string{"code": vendorapi.SuccessCode, "description": "success",
			"refkey": m.RefKey, "messagekey": "mk-" + m.RefKey})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return u, strings.TrimPrefix(srv.URL, "http://")
}

func (u *upstream) count(ref string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.received[ref]
}

// startProxy runs the fault proxy on 127.0.0.1 with a certificate for
// api.vendor.test from a fresh lab CA; it returns its address and the CA
// file.
func startProxy(t *testing.T, up string, every int, extra ...string) (*proxy, string, string) {
	dir := t.TempDir()
	certs, err := vendormock.GenerateCerts(dir, "api.vendor.test", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags(append([]string{"-listen", "127.0.0.1:0", "-cert", certs.CertFile,
		"-key", filepath.Join(dir, vendormock.ServerKeyFile), "-upstream", up,
		"-reset-path", vendorapi.MessagePath, "-reset-every", itoa(every)}, extra...))
	if err != nil {
		t.Fatal(err)
	}
	p, err := newProxy(o, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go p.serve(ln)
	return p, ln.Addr().String(), certs.CAFile
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// sendAll sends refkeys m-1..m-n one after another through the proxy with
// the worker's own vendor client (HTTP/2, pooled), with or without the
// unsafe switch, and returns each send's class.
func sendAll(t *testing.T, addr, ca string, n int, unsafe bool) []outcome.Outcome {
	cfg := worker.Config{VendorURL: "https://api.vendor.test", VendorAddr: addr, CAFile: ca,
		ClientID: "lab", ClientSecret: "s", HTTPVersion: "2", Strategy: vendorapi.PooledName,
		UnsafeAllowTransportReplay: unsafe}.WithDefaults()
	cl, err := worker.NewVendorClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []outcome.Outcome
	for i := 1; i <= n; i++ {
		_, err := cl.Send(context.Background(), message.Notification{RefKey: "m-" + itoa(i), Category: message.Info,
			Recipient: "+821000005678", TemplateCode: "T", Text: "x", CreatedAt: time.Now()})
		o := outcome.Sent
		if err != nil {
			o = vendorapi.ClassOf(err)
			t.Logf("m-%d: %v", i, err)
		}
		got = append(got, o)
	}
	return got
}

// TestResetEveryNth: every 2nd send POST is reset with PROTOCOL_ERROR
// after the upstream accepted it. The worker's client (the guard on)
// classifies those UNKNOWN and sends nothing twice; with the unsafe
// switch Go's transport replays them: SENT, and the upstream has them
// twice (the planted duplicate of the negative control).
func TestResetEveryNth(t *testing.T) {
	t.Run("guard", func(t *testing.T) {
		up, upAddr := startUpstream(t)
		p, addr, ca := startProxy(t, upAddr, 2)
		got := sendAll(t, addr, ca, 4, false)
		want := []outcome.Outcome{outcome.Sent, outcome.Unknown, outcome.Sent, outcome.Unknown}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("m-%d: %s, want %s", i+1, got[i], want[i])
			}
			if n := up.count("m-" + itoa(i+1)); n != 1 {
				t.Errorf("m-%d reached the upstream %d times, want 1", i+1, n)
			}
		}
		if r := p.resets.Load(); r != 2 {
			t.Errorf("resets %d, want 2", r)
		}
	})
	t.Run("unsafe switch", func(t *testing.T) {
		up, upAddr := startUpstream(t)
		_, addr, ca := startProxy(t, upAddr, 3)
		// #1 m-1, #2 m-2, #3 m-3 reset, #4 its replay, #5 m-4.
		got := sendAll(t, addr, ca, 4, true)
		for i, o := range got {
			if o != outcome.Sent {
				t.Errorf("m-%d: %s, want SENT (the transport replayed it)", i+1, o)
			}
		}
		for i, want := range []int{1, 1, 2, 1} {
			if n := up.count("m-" + itoa(i+1)); n != want {
				t.Errorf("m-%d reached the upstream %d times, want %d", i+1, n, want)
			}
		}
	})
}

// TestHTTP1Forwarded: a client that does not pick h2 (a probe) is
// forwarded over HTTP/1.1 and never reset.
func TestHTTP1Forwarded(t *testing.T) {
	up, upAddr := startUpstream(t)
	_, addr, ca := startProxy(t, upAddr, 1)
	cfg := worker.Config{VendorURL: "https://api.vendor.test", VendorAddr: addr, CAFile: ca,
		ClientID: "lab", ClientSecret: "s", HTTPVersion: "1.1", Strategy: vendorapi.PooledName}.WithDefaults()
	cl, err := worker.NewVendorClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.Send(context.Background(), message.Notification{RefKey: "h1", Category: message.Info,
		Recipient: "+821000005678", TemplateCode: "T", Text: "x", CreatedAt: time.Now()}); err != nil {
		t.Fatalf("send over HTTP/1.1: %v", err)
	}
	if n := up.count("h1"); n != 1 {
		t.Errorf("upstream got it %d times, want 1", n)
	}
}

// TestResetH1: with -reset-h1 every 2nd send POST over HTTP/1.1 is
// accepted upstream and its connection reset with no answer. The
// worker's client (guard on) says UNKNOWN and sends it once; a client
// that replays (Go's own HTTP/1.1 transport with an Idempotency-Key
// header on a reused connection, net/http Request.isReplayable) sends
// it twice: the replay the audit's probe catches.
func TestResetH1(t *testing.T) {
	t.Run("guard", func(t *testing.T) {
		up, upAddr := startUpstream(t)
		p, addr, ca := startProxy(t, upAddr, 2, "-reset-h1")
		cfg := worker.Config{VendorURL: "https://api.vendor.test", VendorAddr: addr, CAFile: ca,
			ClientID: "lab", ClientSecret: "s", HTTPVersion: "1.1", Strategy: vendorapi.PooledName}.WithDefaults()
		cl, err := worker.NewVendorClient(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		var got []outcome.Outcome
		for _, k := range []string{"a", "b"} {
			_, err := cl.Send(context.Background(), message.Notification{RefKey: k, Category: message.Info,
				Recipient: "+821000005678", TemplateCode: "T", Text: "x", CreatedAt: time.Now()})
			o := outcome.Sent
			if err != nil {
				o = vendorapi.ClassOf(err)
			}
			got = append(got, o)
		}
		if got[0] != outcome.Sent || got[1] != outcome.Unknown {
			t.Errorf("outcomes %v, want [SENT UNKNOWN]", got)
		}
		if up.count("a") != 1 || up.count("b") != 1 {
			t.Errorf("upstream a %d, b %d: want 1 each", up.count("a"), up.count("b"))
		}
		if r := p.resets.Load(); r != 1 {
			t.Errorf("resets %d, want 1", r)
		}
	})
	t.Run("replaying client", func(t *testing.T) {
		up, upAddr := startUpstream(t)
		_, addr, ca := startProxy(t, upAddr, 2, "-reset-h1")
		pem, err := os.ReadFile(ca)
		if err != nil {
			t.Fatal(err)
		}
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(pem)
		tr := &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "api.vendor.test"},
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, addr)
			},
		}
		defer tr.CloseIdleConnections()
		cl := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		for _, k := range []string{"a", "b"} {
			req, err := http.NewRequest("POST", "https://api.vendor.test"+vendorapi.MessagePath, strings.NewReader(`{"refkey":"`+k+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Idempotency-Key", k)
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatalf("%s: %v (the transport should have replayed it)", k, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if up.count("a") != 1 || up.count("b") != 2 {
			t.Errorf("upstream a %d, b %d: want 1 and 2 (b replayed by the transport)", up.count("a"), up.count("b"))
		}
	})
}

// TestALPNHTTP1Only: with -alpn http/1.1 a client that offers h2 (the
// worker's pooled client at HTTP/2 with the unsafe switch, which replays
// a reset HTTP/2 stream: TestResetEveryNth) is served over HTTP/1.1, its
// reset send reaches the upstream once (Go's HTTP/1.1 transport does not
// replay a POST without an idempotency key) and the reset is an
// HTTP/1.1 one; the control, the default ALPN, serves it h2 and it
// replays. Bad -alpn values are refused by name.
func TestALPNHTTP1Only(t *testing.T) {
	for _, tc := range []struct {
		alpn    []string
		want    []int // sends per refkey at the upstream
		h2Reset bool
	}{
		{[]string{"-alpn", "http/1.1"}, []int{1, 1, 1, 1}, false},
		{nil, []int{1, 1, 2, 1}, true},
	} {
		up, upAddr := startUpstream(t)
		p, addr, ca := startProxy(t, upAddr, 3, append([]string{"-reset-h1"}, tc.alpn...)...)
		sendAll(t, addr, ca, 4, true)
		for i, want := range tc.want {
			if n := up.count("m-" + itoa(i+1)); n != want {
				t.Errorf("alpn %v: m-%d reached the upstream %d times, want %d", tc.alpn, i+1, n, want)
			}
		}
		if r := p.resets.Load(); r < 1 {
			t.Errorf("alpn %v: no reset", tc.alpn)
		}
		if got := p.tls.NextProtos; tc.h2Reset != slices.Contains(got, "h2") {
			t.Errorf("alpn %v: offered %v", tc.alpn, got)
		}
	}
	for _, bad := range []string{"h3", "h2,h2", "http/1.1,spdy/3"} {
		if _, err := parseFlags([]string{"-cert", "c", "-key", "k", "-alpn", bad}); err == nil || !strings.Contains(err.Error(), "-alpn") {
			t.Errorf("-alpn %s: err %v, want one naming -alpn", bad, err)
		}
	}
}
