package vendorapi

import (
	"crypto/tls"
	"fmt"
	"net"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadCPU is the calling OS thread's user+sys CPU time (getrusage
// RUSAGE_THREAD, Linux).
func threadCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkTLSHandshake times one TLS handshake of Go's client against a
// Go server over net.Pipe, with the lab's kind of chain (an ECDSA P-256
// leaf under an ECDSA P-256 CA, as vendormock/certs.go issues), for TLS
// 1.2 and 1.3, full and resumed (a shared tls.ClientSessionCache, as
// NewPerRequestResume keeps), over a loopback TCP connection (net.Pipe
// has no buffer: Go's TLS 1.3 server writes its tickets before it reads
// the client's Finished, and both would wait). ns/op is both sides' work
// and loopback's; client-cpu-ms/op is the client goroutine's own thread CPU
// (getrusage RUSAGE_THREAD on a locked thread): the worker's share of a
// handshake, the round-trip model's "worker CPU" part measured without
// the network (docs/network.md, "The round-trip model, measured").
func BenchmarkTLSHandshake(b *testing.B) {
	lab, _ := pkis(b)
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		for _, resumed := range []bool{false, true} {
			name := tls.VersionName(v) + "/full"
			if resumed {
				name = tls.VersionName(v) + "/resumed"
			}
			b.Run(name, func(b *testing.B) {
				srvCfg := &tls.Config{Certificates: []tls.Certificate{lab.leaf}, MinVersion: v, MaxVersion: v}
				cliCfg := &tls.Config{RootCAs: lab.pool, ServerName: vendorHost, MinVersion: v, MaxVersion: v}
				if resumed {
					cliCfg.ClientSessionCache = tls.NewLRUClientSessionCache(DefaultSessionCacheSize)
				}
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				defer ln.Close()
				handshake := func() (tls.ConnectionState, time.Duration) {
					done := make(chan struct{})
					go func() {
						defer close(done)
						s, err := ln.Accept()
						if err != nil {
							return
						}
						srv := tls.Server(s, srvCfg)
						if herr := srv.Handshake(); herr != nil {
							b.Logf("server handshake: %v", herr)
						} else if v == tls.VersionTLS13 {
							// TLS 1.3 sends its tickets after the handshake:
							// the client reads them with this byte (TLS 1.2's
							// ticket is part of the handshake).
							if _, werr := srv.Write([]byte{1}); werr != nil {
								b.Logf("server write: %v", werr)
							}
						}
						_ = srv.Close()
					}()
					c, err := net.Dial("tcp", ln.Addr().String())
					if err != nil {
						b.Fatal(err)
					}
					runtime.LockOSThread()
					t0 := threadCPU(b)
					cli := tls.Client(c, cliCfg)
					err = cli.Handshake()
					var one [1]byte
					if err == nil && v == tls.VersionTLS13 {
						if _, rerr := cli.Read(one[:]); rerr != nil {
							err = fmt.Errorf("read: %w", rerr)
						}
					}
					cpu := threadCPU(b) - t0
					runtime.UnlockOSThread()
					st := cli.ConnectionState()
					_ = cli.Close()
					<-done
					if err != nil {
						b.Fatalf("handshake: %v", err)
					}
					return st, cpu
				}
				if resumed {
					handshake() // fills the cache
				}
				var cpu time.Duration
				b.ResetTimer()
				for range b.N {
					st, c := handshake()
					if st.DidResume != resumed {
						b.Fatalf("resumed %v, want %v", st.DidResume, resumed)
					}
					cpu += c
				}
				b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "client-cpu-ms/op")
			})
		}
	}
}

// BenchmarkPerRequestClientSetup times what the per-request strategy does
// per send before dialling: a new transport and client, and the release
// that closes it (no connection made): the "transport set-up" part.
func BenchmarkPerRequestClientSetup(b *testing.B) {
	for _, mk := range []func(Config) *PerRequest{NewPerRequest, NewPerRequestResume} {
		s := mk(Config{})
		b.Run(s.Name(), func(b *testing.B) {
			for range b.N {
				c, release, err := s.Client()
				if err != nil || c == nil {
					b.Fatalf("client: %v", err)
				}
				release()
			}
		})
		s.Close()
	}
}
