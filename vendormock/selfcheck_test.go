package vendormock

import (
	"context"
	"crypto/tls"
	"net"
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
	got, err := firstResponseByte(ctx, ln.Addr().String(), client)
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
	if _, err := firstResponseByte(ctx, plain.Addr().String(), client); err == nil {
		t.Error("plain-text server: no error, want a TLS handshake error")
	}
}
