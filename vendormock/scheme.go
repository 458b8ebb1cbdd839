package vendormock

import "fmt"

// Scheme is how the worker reaches the vendor (the lab's SCHEME): plain
// HTTP, HTTPS, or HTTPS with a client certificate (mutual TLS). The
// published Go keep-alive study compares the three (docs/studies.md,
// study A).
type Scheme string

// Schemes of Options.Scheme.
const (
	SchemeHTTP  Scheme = "http"  // plain HTTP through Toxiproxy to nginx
	SchemeHTTPS Scheme = "https" // server TLS (the case's)
	SchemeMTLS  Scheme = "mtls"  // nginx also requires a client certificate from the run's CA
)

// Schemes lists the schemes in the published matrix's order.
var Schemes = []Scheme{SchemeHTTP, SchemeHTTPS, SchemeMTLS}

// ParseScheme maps "http", "https" and "mtls" to a Scheme; "" is
// SchemeHTTPS. Other values are an error naming the known ones.
func ParseScheme(s string) (Scheme, error) {
	switch Scheme(s) {
	case "":
		return SchemeHTTPS, nil
	case SchemeHTTP, SchemeHTTPS, SchemeMTLS:
		return Scheme(s), nil
	}
	return "", fmt.Errorf("unknown scheme %q: known schemes: http, https, mtls", s)
}

// TLS reports whether the scheme uses TLS.
func (s Scheme) TLS() bool { return s != SchemeHTTP }

// ParseHTTPVersion checks the lab's HTTP_VERSION: "1.1" or "2" ("" is
// "1.1"), and reports whether it is 2.
func ParseHTTPVersion(v string) (http2 bool, err error) {
	switch v {
	case "", "1.1":
		return false, nil
	case "2":
		return true, nil
	}
	return false, fmt.Errorf("unknown HTTP version %q: known versions: 1.1, 2", v)
}

// WithTransport returns c set for scheme and HTTP version: TLS off for
// SchemeHTTP (nginx then listens for plain HTTP on the same port, so
// Toxiproxy, the faults and the probes are unchanged); client certificate
// verification against the run's CA for SchemeMTLS; h2 offered through
// ALPN when http2 (TLS schemes only: the lab has no h2c).
func (c NginxConfig) WithTransport(scheme Scheme, http2 bool) NginxConfig {
	c.TLS = scheme.TLS()
	c.VerifyClient = scheme == SchemeMTLS
	c.ClientCAFile = nginxLabDir + "/" + CAFileName
	c.HTTP2 = http2 && c.TLS
	return c
}
