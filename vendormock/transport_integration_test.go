//go:build integration

package vendormock

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// hostVendorClient is the worker's vendor client run from the host against
// s through Toxiproxy: pooled, HTTP/2, an idle pool of 8, with or without
// the run's client certificate.
func hostVendorClient(t *testing.T, s *Stack, withCert bool) *vendorapi.Client {
	t.Helper()
	cfg := vendorapi.Config{
		RootCAs: s.CAPool, HTTPVersion: vendorapi.HTTP2, MaxIdleConnsPerHost: 8,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, s.VendorAddrHost)
		},
	}
	if withCert {
		pair, err := tls.LoadX509KeyPair(s.ClientCertFile, s.ClientKeyFile)
		if err != nil {
			t.Fatalf("load the run's client certificate: %v", err)
		}
		cfg.ClientCertificates = []tls.Certificate{pair}
	}
	c := vendorapi.NewClient(s.VendorURL, vendorapi.Credentials{ClientID: s.ClientID, ClientSecret: s.ClientSecret},
		vendorapi.NewPooled(cfg), vendorapi.WithStatusTable(vendorapi.DefaultStatusTable()))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestMutualTLSAndHTTP2 (one stack, SCHEME=mtls, HTTP_VERSION=2,
// SERVER_DELAY_MS=0):
//   - a client without a certificate is refused by nginx (421): the send
//     is NOT_SENT with a reason naming the client certificate, and nothing
//     reaches WireMock;
//   - with the run's certificate (the control), the pooled client at 8
//     sends at once, three times over, speaks h2 on ONE connection: every
//     access log line is HTTP/2.0 and carries the same connection number.
func TestMutualTLSAndHTTP2(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s := startStack(t, ctx, Options{Images: labImages(t), Scheme: SchemeMTLS, HTTPVersion: "2", ServerDelayMS: 0, Log: testLog{t}})
	if s.ClientCertFile == "" || !s.HTTP2 {
		t.Fatalf("stack: client cert %q, h2 %v; want both", s.ClientCertFile, s.HTTP2)
	}

	t.Run("no client certificate", func(t *testing.T) {
		c := hostVendorClient(t, s, false)
		_, err := c.Send(ctx, integrationNote("mtls-nocert-1"))
		if vendorapi.ClassOf(err) != outcome.NotSent || !strings.Contains(err.Error(), "client certificate") {
			t.Errorf("Send without a client certificate: %v, want NOT_SENT naming the client certificate", err)
		}
		for _, path := range []string{vendorapi.TokenPath, vendorapi.MessagePath} {
			if n, err := s.JournalCount(ctx, http.MethodPost, path); err != nil || n != 0 {
				t.Errorf("WireMock saw %d POST %s (%v), want 0", n, path, err)
			}
		}
		entries, _, err := s.ReadAccessLog(0)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) == 0 || entries[0].Status != http.StatusMisdirectedRequest || entries[0].UpstreamAddr != "" {
			t.Errorf("access log %+v, want nginx's own 421, not proxied", entries)
		}
	})

	t.Run("h2 pooled at concurrency 8 shares one connection", func(t *testing.T) {
		from, err := s.AccessLogSize()
		if err != nil {
			t.Fatal(err)
		}
		c := hostVendorClient(t, s, true)
		for round := range 3 {
			var wg sync.WaitGroup
			errs := make([]error, 8)
			protos := make([]string, 8)
			for i := range 8 {
				wg.Go(func() {
					res, err := c.Send(ctx, integrationNote(fmt.Sprintf("mtls-h2-%d-%d", round, i)))
					errs[i], protos[i] = err, res.Trace.Proto
				})
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			for i, p := range protos {
				if p != "HTTP/2.0" {
					t.Errorf("round %d send %d: proto %q, want HTTP/2.0", round, i, p)
				}
			}
		}
		entries := waitAccessEntries(t, s, from, 25) // 1 token call + 24 sends
		conns := map[int64]bool{}
		for _, e := range entries {
			conns[e.Connection] = true
			if e.ServerProtocol != "HTTP/2.0" || e.Status != http.StatusOK {
				t.Errorf("access log line %+v: want HTTP/2.0 and 200", e)
			}
		}
		if len(conns) != 1 {
			t.Errorf("%d connections in the access log, want 1", len(conns))
		}
		if n, err := s.JournalCount(ctx, http.MethodPost, vendorapi.MessagePath); err != nil || n != 24 {
			t.Errorf("WireMock saw %d sends (%v), want 24", n, err)
		}
	})
}

// waitAccessEntries reads the access log from offset from until it holds n
// lines (nginx writes a line after the response), for up to 10 s.
func waitAccessEntries(t *testing.T, s *Stack, from int64, n int) []AccessEntry {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		entries, _, err := s.ReadAccessLog(from)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) >= n || time.Now().After(deadline) {
			if len(entries) != n {
				t.Errorf("%d access log lines, want %d", len(entries), n)
			}
			return entries
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// integrationNote is a valid notification with refkey ref.
func integrationNote(ref string) message.Notification {
	return message.Notification{
		RefKey: ref, Category: message.Info, Recipient: "+821000000000",
		TemplateCode: "SHIP_01", Text: "your order shipped", CreatedAt: time.Now(),
	}
}

// TestPlainHTTP (SCHEME=http): nginx answers plain HTTP through Toxiproxy;
// the pooled client sends over one connection without TLS.
func TestPlainHTTP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s := startStack(t, ctx, Options{Images: labImages(t), Scheme: SchemeHTTP, ServerDelayMS: 0, Log: testLog{t}})
	if !strings.HasPrefix(s.VendorURL, "http://") {
		t.Fatalf("vendor url %q, want http://", s.VendorURL)
	}
	if _, err := s.SelfCheck(ctx, 0); err != nil {
		t.Fatalf("SelfCheck over plain HTTP: %v", err)
	}
	c := hostVendorClient(t, s, false)
	for i := range 5 {
		res, err := c.Send(ctx, integrationNote(fmt.Sprintf("plain-%d", i)))
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		if res.Trace.Proto != "HTTP/1.1" || res.Trace.TLSVersion != "" {
			t.Errorf("send %d: proto %q tls %q, want HTTP/1.1 without TLS", i, res.Trace.Proto, res.Trace.TLSVersion)
		}
	}
	conns := map[int64]bool{}
	for _, e := range waitAccessEntries(t, s, 0, 6) {
		conns[e.Connection] = true
		if e.TLSProtocol != "" || e.Status != http.StatusOK {
			t.Errorf("access log line %+v: want no TLS and 200", e)
		}
	}
	if len(conns) != 1 {
		t.Errorf("%d connections, want 1", len(conns))
	}
}
