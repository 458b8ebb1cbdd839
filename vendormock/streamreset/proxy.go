package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// proxy is the running fault proxy.
type proxy struct {
	opts   options
	log    *log.Logger
	tls    *tls.Config
	base   string // upstream URL prefix, "https://nginx:443"
	client *http.Client
	// counted is the number of POSTs on opts.resetPath seen so far, on
	// every connection; resets is how many streams were reset.
	counted, resets atomic.Int64
}

// hopHeaders are the connection-specific fields that do not cross a
// proxy (RFC 9110 7.6.1; RFC 9113 8.2.2 forbids them in HTTP/2).
var hopHeaders = map[string]bool{
	"connection": true, "keep-alive": true, "proxy-connection": true,
	"transfer-encoding": true, "upgrade": true, "te": true, "content-length": true, "host": true,
}

// serve accepts connections until ln is closed, and returns the error
// that ended it (never nil).
func (p *proxy) serve(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go p.conn(c)
	}
}

// conn handshakes TLS and serves h2, or HTTP/1.1 when the client did not
// pick h2 (probes).
func (p *proxy) conn(c net.Conn) {
	tc := tls.Server(c, p.tls)
	defer tc.Close()
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := tc.Handshake(); err != nil {
		return
	}
	tc.SetDeadline(time.Time{})
	if tc.ConnectionState().NegotiatedProtocol == "h2" {
		p.serveH2(tc)
		return
	}
	p.serveH1(tc)
}

// answer is an upstream answer, or the decision to reset the stream.
type answer struct {
	status int
	header http.Header
	body   []byte
	reset  bool
}

// forward sends one request upstream and, with rule, decides whether its
// stream (h2) or connection (HTTP/1.1) is reset (a counted POST, the Nth,
// upstream 2xx). An upstream
// failure is answered 502, as a load balancer does.
func (p *proxy) forward(method, path, authority string, h http.Header, body []byte, rule, h2 bool) answer {
	req, err := http.NewRequest(method, p.base+path, bytes.NewReader(body))
	if err != nil {
		return answer{status: http.StatusBadRequest, header: http.Header{}}
	}
	req.Header = h
	req.Host = authority
	if p.opts.serverName != "" {
		req.Host = p.opts.serverName
	}
	counted := rule && method == http.MethodPost && strings.SplitN(path, "?", 2)[0] == p.opts.resetPath
	var n int64
	if counted {
		n = p.counted.Add(1)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		p.log.Printf("upstream %s %s: %v", method, path, err)
		return answer{status: http.StatusBadGateway, header: http.Header{}}
	}
	b, err := drain(resp.Body)
	if err != nil {
		return answer{status: http.StatusBadGateway, header: http.Header{}}
	}
	a := answer{status: resp.StatusCode, header: resp.Header, body: b}
	if counted && p.opts.resetEvery > 0 && n%int64(p.opts.resetEvery) == 0 && resp.StatusCode/100 == 2 {
		a.reset = true
		how := "HTTP/2 POST %s #%d (%s %q) with PROTOCOL_ERROR"
		if !h2 {
			how = "HTTP/1.1 POST %s #%d (%s %q) with a TCP reset, no answer,"
		}
		p.log.Printf("reset "+how+" after upstream %d; resets so far %d",
			path, n, p.opts.logHeader, h.Get(p.opts.logHeader), resp.StatusCode, p.resets.Add(1))
	}
	return a
}

// serveH1 forwards HTTP/1.1 requests one after another; no stream to
// reset, so the rule applies only with -reset-h1 (else nothing is
// counted): a reset request's connection is closed with a TCP reset and
// no answer.
func (p *proxy) serveH1(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		var body bytes.Buffer
		if _, err := body.ReadFrom(req.Body); err != nil {
			return
		}
		req.Body.Close()
		h := req.Header.Clone()
		for k := range h {
			if hopHeaders[strings.ToLower(k)] {
				delete(h, k)
			}
		}
		a := p.forward(req.Method, req.URL.RequestURI(), req.Host, h, body.Bytes(), p.opts.resetH1, false)
		if a.reset {
			abort(c)
			return
		}
		resp := &http.Response{StatusCode: a.status, ProtoMajor: 1, ProtoMinor: 1, Header: a.header,
			ContentLength: int64(len(a.body)), Body: http.NoBody}
		if len(a.body) > 0 {
			resp.Body = readCloser{bytes.NewReader(a.body)}
		}
		for k := range resp.Header {
			if hopHeaders[strings.ToLower(k)] {
				delete(resp.Header, k)
			}
		}
		if err := resp.Write(c); err != nil {
			return
		}
	}
}

// abort closes c's TCP connection with a reset (SO_LINGER 0), its TLS
// session unclosed: what a load balancer that drops a connection does.
func abort(c net.Conn) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if tcp, ok := c.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = c.Close()
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// h2Request is one request stream being read.
type h2Request struct {
	method, path, authority string
	header                  http.Header
	body                    bytes.Buffer
}

// h2Conn is one HTTP/2 connection: frames are read by serveH2's loop and
// written under mu by the request goroutines.
type h2Conn struct {
	mu  sync.Mutex
	fr  *http2.Framer
	enc *hpack.Encoder
	hb  bytes.Buffer
}

// serveH2 reads frames, forwards each complete request from its own
// goroutine and answers or resets its stream.
func (p *proxy) serveH2(c net.Conn) {
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil || string(preface) != http2.ClientPreface {
		return
	}
	hc := &h2Conn{fr: http2.NewFramer(c, c)}
	hc.enc = hpack.NewEncoder(&hc.hb)
	hc.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if err := hc.write(func(fr *http2.Framer) error { return fr.WriteSettings() }); err != nil {
		return
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	streams := map[uint32]*h2Request{}
	start := func(id uint32, r *h2Request) {
		delete(streams, id)
		wg.Add(1)
		go func() { defer wg.Done(); p.h2Answer(hc, id, r) }()
	}
	for {
		f, err := hc.fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				hc.write(func(fr *http2.Framer) error { return fr.WriteSettingsAck() })
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				hc.write(func(fr *http2.Framer) error { return fr.WritePing(true, f.Data) })
			}
		case *http2.MetaHeadersFrame:
			r := &h2Request{method: f.PseudoValue("method"), path: f.PseudoValue("path"),
				authority: f.PseudoValue("authority"), header: http.Header{}}
			for _, hf := range f.RegularFields() {
				if !hopHeaders[hf.Name] {
					r.header.Add(hf.Name, hf.Value)
				}
			}
			streams[f.StreamID] = r
			if f.StreamEnded() {
				start(f.StreamID, r)
			}
		case *http2.DataFrame:
			r := streams[f.StreamID]
			if n := uint32(len(f.Data())); n > 0 {
				id := f.StreamID
				hc.write(func(fr *http2.Framer) error {
					if err := fr.WriteWindowUpdate(0, n); err != nil {
						return err
					}
					return fr.WriteWindowUpdate(id, n)
				})
			}
			if r == nil {
				continue
			}
			r.body.Write(f.Data())
			if f.StreamEnded() {
				start(f.StreamID, r)
			}
		case *http2.RSTStreamFrame:
			delete(streams, f.StreamID)
		case *http2.GoAwayFrame:
			return
		}
	}
}

// h2Answer forwards r and writes the upstream's answer on stream id, or
// RST_STREAM(PROTOCOL_ERROR) when the rule says so.
func (p *proxy) h2Answer(hc *h2Conn, id uint32, r *h2Request) {
	a := p.forward(r.method, r.path, r.authority, r.header, r.body.Bytes(), true, true)
	if a.reset {
		hc.write(func(fr *http2.Framer) error { return fr.WriteRSTStream(id, http2.ErrCodeProtocol) })
		return
	}
	hc.write(func(fr *http2.Framer) error {
		hc.hb.Reset()
		hc.enc.WriteField(hpack.HeaderField{Name: ":status", Value: strconv.Itoa(a.status)})
		for k, vs := range a.header {
			name := strings.ToLower(k)
			if hopHeaders[name] {
				continue
			}
			for _, v := range vs {
				hc.enc.WriteField(hpack.HeaderField{Name: name, Value: v})
			}
		}
		hc.enc.WriteField(hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(len(a.body))})
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hc.hb.Bytes(),
			EndHeaders: true, EndStream: len(a.body) == 0}); err != nil {
			return err
		}
		for b := a.body; len(b) > 0; {
			n := min(len(b), 16384)
			if err := fr.WriteData(id, n == len(b), b[:n]); err != nil {
				return err
			}
			b = b[n:]
		}
		return nil
	})
}

// write runs fn with the connection's framer under its lock.
func (hc *h2Conn) write(fn func(*http2.Framer) error) error {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	return fn(hc.fr)
}
