// Command streamreset is the lab's stream-reset fault proxy: an HTTP/2
// load balancer in front of the vendor that resets a request's stream with
// RST_STREAM(PROTOCOL_ERROR) after the vendor accepted it.
//
// It terminates TLS with the lab's certificate (ALPN h2, and http/1.1 for
// probes), forwards every request over HTTPS/1.1 to the upstream (nginx,
// verified against the lab's CA), and answers with the upstream's answer,
// except for every Nth POST on the reset path whose upstream answer is a
// 2xx: that stream is reset with PROTOCOL_ERROR instead, so the vendor HAS
// the message and the client cannot know it. Go's HTTP/2 transport treats
// that reset as retryable (golang/go#47635) and, unless refused, sends the
// POST again (docs/outcomes.md#automatic-replays). nginx cannot make this
// fault: it resets a stream it gives up on with INTERNAL_ERROR, and with
// PROTOCOL_ERROR only when the client timed out (ngx_http_v2_close_stream).
//
// Usage:
//
//	streamreset -listen :443 -cert server.pem -key server.key \
//	  -upstream nginx:443 -upstream-ca ca.pem -upstream-server-name api.vendor.test \
//	  [-client-cert client.pem -client-key client.key] \
//	  -reset-path /v3/message -reset-every 3 [-reset-h1] [-alpn h2,http/1.1] [-log-header x-refkey]
//
// With -reset-h1 the rule applies to HTTP/1.1 too: the counted POST's
// answer is never written, its connection is closed with a TCP reset
// (SO_LINGER 0) after the upstream accepted it (the audit's POST replay
// probe, scenarios/audit/probe_replay.go). -alpn names the protocols the
// proxy offers in the TLS handshake (ALPN), in its order of preference:
// "http/1.1" alone makes a client that speaks HTTP/2 use HTTP/1.1 (the
// replay probe's vendor-forced HTTP/1.1 lane).
//
// Every reset is logged on stdout as "streamreset: reset ..." with the
// stream, the path, the -log-header value and the upstream's status.
// SIGTERM or SIGINT stops it (exit 0); bad flags or files exit 2, a
// listener that fails exits 1.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

// options are the command's flags.
type options struct {
	listen, cert, key                string
	upstream, upstreamCA, serverName string
	clientCert, clientKey            string
	resetPath, logHeader             string
	resetEvery                       int
	// resetH1 applies the rule to HTTP/1.1 too: the counted POST's
	// connection is closed with a TCP reset instead of the answer.
	resetH1 bool
	// alpn are the protocols offered by ALPN, preferred first.
	alpn []string
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("streamreset", flag.ContinueOnError)
	fs.StringVar(&o.listen, "listen", ":443", "listen on this `host:port` (TLS)")
	fs.StringVar(&o.cert, "cert", "", "PEM `file` of the server certificate chain")
	fs.StringVar(&o.key, "key", "", "PEM `file` of the server key")
	fs.StringVar(&o.upstream, "upstream", "nginx:443", "forward to this `host:port`")
	fs.StringVar(&o.upstreamCA, "upstream-ca", "", "PEM `file` of the CA the upstream is verified against; empty = plain HTTP upstream")
	fs.StringVar(&o.serverName, "upstream-server-name", "", "TLS server name (and Host) expected of the upstream; empty = the request's authority")
	fs.StringVar(&o.clientCert, "client-cert", "", "PEM `file` of a client certificate presented to the upstream (mutual TLS)")
	fs.StringVar(&o.clientKey, "client-key", "", "PEM `file` of that certificate's key")
	fs.StringVar(&o.resetPath, "reset-path", "/v3/message", "the rule counts POSTs on this `path`")
	fs.IntVar(&o.resetEvery, "reset-every", 0, "reset every `N`th counted POST (after a 2xx upstream answer); 0 = never")
	fs.BoolVar(&o.resetH1, "reset-h1", false, "apply the rule to HTTP/1.1 too: close the connection with a TCP reset instead of answering (the audit's replay probe)")
	fs.StringVar(&o.logHeader, "log-header", "x-refkey", "request `header` named in the reset log lines")
	alpn := fs.String("alpn", "h2,http/1.1", "`protocols` offered by ALPN, comma-separated, preferred first: h2, http/1.1")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, p := range strings.Split(*alpn, ",") {
		p = strings.TrimSpace(p)
		if p != "h2" && p != "http/1.1" {
			return o, fmt.Errorf("-alpn %q: %q is not a protocol the proxy speaks; allowed: h2, http/1.1", *alpn, p)
		}
		if slices.Contains(o.alpn, p) {
			return o, fmt.Errorf("-alpn %q: %s twice", *alpn, p)
		}
		o.alpn = append(o.alpn, p)
	}
	if o.cert == "" || o.key == "" {
		return o, errors.New("-cert and -key are required")
	}
	if o.resetEvery < 0 {
		return o, fmt.Errorf("-reset-every %d: want >= 0", o.resetEvery)
	}
	if (o.clientCert == "") != (o.clientKey == "") {
		return o, errors.New("-client-cert and -client-key go together")
	}
	return o, nil
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "streamreset:", err)
		os.Exit(2)
	}
	p, err := newProxy(o, log.New(os.Stdout, "streamreset: ", log.LstdFlags|log.Lmicroseconds))
	if err != nil {
		fmt.Fprintln(os.Stderr, "streamreset:", err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "streamreset:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() { <-ctx.Done(); ln.Close() }()
	p.log.Printf("listening on %s, upstream %s, reset every %d POST on %s, ALPN %s", ln.Addr(), o.upstream, o.resetEvery, o.resetPath, strings.Join(o.alpn, ","))
	if err := p.serve(ln); ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "streamreset:", err)
		os.Exit(1)
	}
}

// newProxy loads the certificates and builds the upstream client. Errors:
// unreadable or invalid certificate, key or CA files.
func newProxy(o options, logger *log.Logger) (*proxy, error) {
	pair, err := tls.LoadX509KeyPair(o.cert, o.key)
	if err != nil {
		return nil, fmt.Errorf("load server certificate: %w", err)
	}
	up := &tls.Config{ServerName: o.serverName, MinVersion: tls.VersionTLS12}
	scheme := "http"
	if o.upstreamCA != "" {
		pem, err := os.ReadFile(o.upstreamCA)
		if err != nil {
			return nil, fmt.Errorf("read upstream ca: %w", err)
		}
		up.RootCAs = x509.NewCertPool()
		if !up.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("upstream ca %s: no PEM certificate", o.upstreamCA)
		}
		scheme = "https"
	}
	if o.clientCert != "" {
		c, err := tls.LoadX509KeyPair(o.clientCert, o.clientKey)
		if err != nil {
			return nil, fmt.Errorf("load client certificate: %w", err)
		}
		up.Certificates = []tls.Certificate{c}
	}
	return &proxy{
		opts: o,
		log:  logger,
		tls: &tls.Config{Certificates: []tls.Certificate{pair}, NextProtos: o.alpn,
			MinVersion: tls.VersionTLS12},
		base: scheme + "://" + o.upstream,
		client: &http.Client{
			Timeout: 60 * time.Second,
			// Never follow a redirect: the answer goes back as it is.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Transport: &http.Transport{
				TLSClientConfig: up, ForceAttemptHTTP2: false, MaxIdleConnsPerHost: 16,
				IdleConnTimeout: 30 * time.Second,
			},
		},
	}, nil
}

// drain reads and closes an upstream body, up to 1 MiB.
func drain(r io.ReadCloser) ([]byte, error) {
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, 1<<20))
}
