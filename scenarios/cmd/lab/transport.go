package main

import (
	"fmt"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/worker"
)

// Allowed values of the transport keys, shared by the bench and the
// matrix (docs/studies.md, study A: the schemes and concurrencies).
var (
	allowedSchemes      = []string{"http", "https", "mtls"}
	allowedHTTPVersions = []string{"1.1", "2"}
)

// maxPoolSize bounds POOL_SIZE.
const maxPoolSize = 1000

// Texts of the transport keys in usage, shared by the bench and the matrix.
const (
	helpHTTPVersion = "HTTP version offered (2: h2 through ALPN, TLS schemes only)"
	helpPoolSize    = "pooled idle connections per host; 0 = the concurrency (2 = Go's default, the pitfall)"
	allowPoolSize   = "a whole number 0..1000"
)

func allowConcurrency() string { return fmt.Sprintf("a whole number 1..%d", worker.MaxConcurrency) }

// parseConcurrency reads one concurrency, 1..worker.MaxConcurrency.
func parseConcurrency(v string) (int, error) { return parseInt(v, 1, worker.MaxConcurrency) }

// parsePoolSize reads POOL_SIZE, 0..maxPoolSize.
func parsePoolSize(v string) (int, error) { return parseInt(v, 0, maxPoolSize) }

// parseHTTPVersion reads HTTP_VERSION.
func parseHTTPVersion(v string) (string, error) { return oneOf(v, allowedHTTPVersions) }

// transportKeys are the bench's SCHEME, CONCURRENCY, HTTP_VERSION and
// POOL_SIZE.
var transportKeys = []key{
	{"SCHEME", "how the worker reaches nginx: plain HTTP, HTTPS (the case's), or HTTPS with a client certificate from the run's CA (mtls)", bench.DefaultScheme,
		"one of http, https, mtls",
		func(c *bench.Config, v string) (err error) { c.Scheme, err = oneOf(v, allowedSchemes); return }},
	{"CONCURRENCY", "messages each worker handles at once (prefetch and sends in flight); above 1 the queue order is not kept", fmt.Sprint(bench.DefaultConcurrency),
		allowConcurrency(),
		func(c *bench.Config, v string) (err error) { c.Concurrency, err = parseConcurrency(v); return }},
	{"HTTP_VERSION", helpHTTPVersion, bench.DefaultHTTPVersion, "1.1 or 2; 2 needs SCHEME https or mtls",
		func(c *bench.Config, v string) (err error) { c.HTTPVersion, err = parseHTTPVersion(v); return }},
	{"POOL_SIZE", helpPoolSize, "0", allowPoolSize,
		func(c *bench.Config, v string) (err error) { c.PoolSize, err = parsePoolSize(v); return }},
}

// checkTransport is the check across transport keys: HTTP/2 needs TLS
// (the lab has no h2c). It returns a *UsageError naming HTTP_VERSION.
func checkTransport(c bench.Config, sources map[string]string) error {
	if c.HTTPVersion == "2" && c.Scheme == "http" {
		src := sources["HTTP_VERSION"]
		return &UsageError{Key: "HTTP_VERSION", Value: c.HTTPVersion, Source: src,
			Msg: "HTTP/2 is offered through TLS ALPN only (the lab has no h2c); allowed with SCHEME=http: 1.1; or use SCHEME https or mtls"}
	}
	return nil
}
