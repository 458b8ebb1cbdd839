package vendorapi

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Raw TCP/TLS servers and a fake DNS server for the failure cases that an
// http.Server cannot produce (resets, half-written answers, NXDOMAIN).

// rawServer is a TCP listener whose every accepted connection is handed to
// handle, for faults httptest cannot make (resets, silent peers, closing
// without an answer). It counts accepts and request arrivals.
type rawServer struct {
	ln      net.Listener
	accepts atomic.Int64
	reqs    atomic.Int64 // message requests read (by serveHTTP)
	handle  func(s *rawServer, c *net.TCPConn)
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   []net.Conn
}

func startRaw(t testing.TB, handle func(s *rawServer, c *net.TCPConn)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	s := &rawServer{ln: ln, handle: handle}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepts.Add(1)
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.handle(s, c.(*net.TCPConn))
			}()
		}
	}()
	t.Cleanup(s.close)
	return s
}

func (s *rawServer) addr() string { return s.ln.Addr().String() }

func (s *rawServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// serverTLS wraps c in a TLS server with the lab certificate and completes
// the handshake.
func serverTLS(c net.Conn) (*tls.Conn, error) {
	lab, _ := pkis(nil)
	tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{lab.leaf}})
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if err := tc.Handshake(); err != nil {
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return tc, nil
}

// reset closes c with SO_LINGER 0: the kernel sends RST instead of FIN.
func reset(c *net.TCPConn) {
	c.SetLinger(0)
	c.Close()
}

// serveHTTP runs a TLS HTTP/1.1 loop on c: token calls are answered with a
// valid token and the connection kept alive; every POST /v3/message is
// counted in s.reqs and handed to onMessage, which owns the connection from
// then on (answer, close, reset...) and returns whether to keep serving.
func serveHTTP(s *rawServer, c *net.TCPConn, onMessage func(c *net.TCPConn, tc *tls.Conn, r *http.Request) bool) {
	tc, err := serverTLS(c)
	if err != nil {
		c.Close()
		return
	}
	br := bufio.NewReader(tc)
	for {
		r, err := http.ReadRequest(br)
		if err != nil {
			c.Close()
			return
		}
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == TokenPath {
			body := fmt.Sprintf(`{"accesstoken":"raw-tok","type":"Bearer","expired":%q}`, time.Now().Add(time.Hour).Format(time.RFC3339))
			fmt.Fprintf(tc, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			continue
		}
		s.reqs.Add(1)
		if !onMessage(c, tc, r) {
			return
		}
	}
}

// closedAddr returns a loopback address nothing listens on (connection
// refused).
func closedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// fakeDNS is a UDP DNS server on loopback that answers every query
// NXDOMAIN, so Go's own resolver (PreferGo) fails a lookup the way a real
// one does (*net.DNSError, IsNotFound), fast and offline.
type fakeDNS struct {
	pc      net.PacketConn
	queries atomic.Int64
	done    chan struct{}
}

func startDNS(t testing.TB) *fakeDNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen udp: %v", err)
	}
	d := &fakeDNS{pc: pc, done: make(chan struct{})}
	go func() {
		defer close(d.done)
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp := nxdomain(buf[:n]); resp != nil {
				d.queries.Add(1)
				pc.WriteTo(resp, from)
			}
		}
	}()
	t.Cleanup(func() { pc.Close(); <-d.done })
	return d
}

// resolver returns a pure-Go resolver that asks d.
func (d *fakeDNS) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var nd net.Dialer
		return nd.DialContext(ctx, "udp", d.pc.LocalAddr().String())
	}}
}

// nxdomain builds the answer to query q: same ID and question, QR=1, RD
// copied, RA=1, RCODE=3 (name error), no records.
func nxdomain(q []byte) []byte {
	if len(q) < 12 {
		return nil
	}
	i := 12
	for i < len(q) && q[i] != 0 { // question name labels
		i += int(q[i]) + 1
	}
	end := i + 1 + 4 // zero label, QTYPE, QCLASS
	if end > len(q) {
		return nil
	}
	r := make([]byte, end)
	copy(r, q[:end])
	r[2] = 0x80 | (q[2] & 0x01) // QR, RD
	r[3] = 0x80 | 0x03          // RA, NXDOMAIN
	r[4], r[5] = 0, 1           // QDCOUNT 1
	r[6], r[7], r[8], r[9], r[10], r[11] = 0, 0, 0, 0, 0, 0
	return r
}
