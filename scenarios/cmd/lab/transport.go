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

func allowConcurrency() string { return fmt.Sprintf("a whole number 1..%d", worker.MaxConcurrency) }

// parseConcurrency reads one concurrency, 1..worker.MaxConcurrency.
func parseConcurrency(v string) (int, error) { return parseInt(v, 1, worker.MaxConcurrency) }

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
