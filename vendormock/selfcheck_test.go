package vendormock

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"
)

func TestNewConnRTTs(t *testing.T) {
	if NewConnRTTs(true) != 2 || NewConnRTTs(false) != 1 {
		t.Errorf("NewConnRTTs(on, off) = %d, %d; want 2, 1", NewConnRTTs(true), NewConnRTTs(false))
	}
}

// TestFirstResponseByte runs the probe against a local TLS server that
// waits before answering: the measured time must include the wait, and a
// server that never speaks TLS must fail the probe.
func TestFirstResponseByte(t *testing.T) {
	certs, err := GenerateCerts(t.TempDir(), "api.vendor.test", 0)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(certs.CertFile, certs.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	client := &tls.Config{RootCAs: certs.CAPool, ServerName: "api.vendor.test"}
	const hold = 40 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				time.Sleep(hold) // a handshake toxic's hold, in miniature
				tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{cert}})
				_ = tc.Handshake()
			}()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := firstResponseByte(ctx, ln.Addr().String(), client, "api.vendor.test")
	if err != nil {
		t.Fatalf("firstResponseByte: %v", err)
	}
	if got < hold {
		t.Errorf("first response byte after %s, want >= %s (the server's hold)", got, hold)
	}

	// Negative control: a server that answers with plain text is no TLS server.
	plain, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	go func() {
		c, err := plain.Accept()
		if err == nil {
			_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
			c.Close()
		}
	}()
	if _, err := firstResponseByte(ctx, plain.Addr().String(), client, "api.vendor.test"); err == nil {
		t.Error("plain-text server: no error, want a TLS handshake error")
	}
}

// TestFirstResponseBytePlainHTTP: under SchemeHTTP the probe is a GET of
// ProbePath, timed to the answer's first byte.
func TestFirstResponseBytePlainHTTP(t *testing.T) {
	const hold = 30 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b := make([]byte, 256)
		n, _ := c.Read(b)
		got <- string(b[:n])
		time.Sleep(hold)
		_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := firstResponseByte(ctx, ln.Addr().String(), nil, "api.vendor.test")
	if err != nil {
		t.Fatalf("firstResponseByte: %v", err)
	}
	if req := <-got; !strings.HasPrefix(req, "GET "+ProbePath+" HTTP/1.1\r\nHost: api.vendor.test\r\n") {
		t.Errorf("request %q; want a GET of %s for the vendor host", req, ProbePath)
	}
	if d < hold {
		t.Errorf("first response byte after %s; want >= the server's %s", d, hold)
	}
}
