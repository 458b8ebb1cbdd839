package results

import (
	"fmt"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// Defaults of a transport, as results written before SCHEME and
// HTTP_VERSION existed were measured.
const (
	DefaultScheme      = string(vendormock.SchemeHTTPS)
	DefaultHTTPVersion = "1.1"
)

// Transport is how a run's worker reaches the vendor and how many sends
// it keeps in flight: the bench's and the matrix's SCHEME, CONCURRENCY,
// HTTP_VERSION and POOL_SIZE (docs/studies.md, study A, compares the
// schemes and concurrencies).
type Transport struct {
	Scheme      vendormock.Scheme // http, https, mtls; "" = https
	Concurrency int               // messages handled at once; < 1 = 1
	HTTPVersion string            // "1.1" or "2"; "" = "1.1"
	PoolSize    int               // pooled idle connections per host; 0 = the concurrency
}

// Normal returns t with its defaults filled in.
func (t Transport) Normal() Transport {
	if t.Scheme == "" {
		t.Scheme = vendormock.SchemeHTTPS
	}
	if t.Concurrency < 1 {
		t.Concurrency = 1
	}
	if t.HTTPVersion == "" {
		t.HTTPVersion = DefaultHTTPVersion
	}
	return t
}

// PoolFor is the idle pool a client strategy runs with: PoolSize, or the
// concurrency when 0, for pooled; 0 for per-request (it keeps none).
func (t Transport) PoolFor(mode string) int {
	if mode != vendorapi.PooledName {
		return 0
	}
	t = t.Normal()
	if t.PoolSize > 0 {
		return t.PoolSize
	}
	return t.Concurrency
}

// String is the transport as the lab's keys write it, e.g. "SCHEME=https
// CONCURRENCY=1 HTTP_VERSION=1.1 POOL_SIZE=0".
func (t Transport) String() string {
	t = t.Normal()
	return fmt.Sprintf("SCHEME=%s CONCURRENCY=%d HTTP_VERSION=%s POOL_SIZE=%d", t.Scheme, t.Concurrency, t.HTTPVersion, t.PoolSize)
}

// SetTransport records the run's transport in r and the protocols nginx
// logged for its sends ($server_protocol -> sends).
func (r *Result) SetTransport(t Transport, mode string, protocols map[string]int) {
	t = t.Normal()
	r.Scheme, r.Concurrency, r.HTTPVersion, r.PoolSize = string(t.Scheme), t.Concurrency, t.HTTPVersion, t.PoolFor(mode)
	r.Protocols = protocols
}

// SchemeOf is a result's scheme; "https" for results written before
// SCHEME existed.
func (r Result) SchemeOf() string {
	if r.Scheme == "" {
		return DefaultScheme
	}
	return r.Scheme
}

// ConcurrencyOf is a result's concurrency; 1 for results written before
// CONCURRENCY existed.
func (r Result) ConcurrencyOf() int { return max(r.Concurrency, 1) }

// forMode is t as it applies to a client strategy: the pool size only
// for pooled and only when it differs from the concurrency (the default).
func (t Transport) forMode(mode string) Transport {
	t = t.Normal()
	if mode != vendorapi.PooledName || t.PoolSize == t.Concurrency {
		t.PoolSize = 0
	}
	return t
}

// FileSuffix names the transport of a client strategy's run in file
// names: "" for https at concurrency 1 over HTTP/1.1 with the default
// pool, else "-<scheme>-c<N>", then "-h2" and "-pool<P>" when set (the
// pool only for pooled, and only when it differs from the concurrency).
func (t Transport) FileSuffix(mode string) string {
	t = t.forMode(mode)
	if t == (Transport{Scheme: vendormock.SchemeHTTPS, Concurrency: 1, HTTPVersion: DefaultHTTPVersion}) {
		return ""
	}
	s := fmt.Sprintf("-%s-c%d", t.Scheme, t.Concurrency)
	if t.HTTPVersion == "2" {
		s += "-h2"
	}
	if t.PoolSize > 0 {
		s += fmt.Sprintf("-pool%d", t.PoolSize)
	}
	return s
}
