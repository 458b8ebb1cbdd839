package bench

import (
	"io"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
)

// Transport returns the Config's transport.
func (c Config) Transport() results.Transport {
	return results.Transport{Scheme: vendormock.Scheme(c.Scheme), Concurrency: c.Concurrency, HTTPVersion: c.HTTPVersion, PoolSize: c.PoolSize}
}

// ConfigureTransport sets t's worker settings in c: Concurrency and
// HTTPVersion (with their defaults filled in), and PoolSize (0 = the
// worker's default pool, the concurrency).
func ConfigureTransport(t results.Transport, c *worker.Config) {
	t = t.Normal()
	c.Concurrency, c.HTTPVersion, c.PoolSize = t.Concurrency, t.HTTPVersion, max(t.PoolSize, 0)
}

// CountProtocols counts the send requests (POST SendPath) of entries by
// nginx's $server_protocol ("HTTP/1.1", "HTTP/2.0").
func CountProtocols(entries []vendormock.AccessEntry) map[string]int {
	out := map[string]int{}
	for _, e := range entries {
		if e.Method == "POST" && e.Path == results.SendPath {
			out[e.ServerProtocol]++
		}
	}
	return out
}

// editWorkerEnv is a test seam: when not nil, it edits a Go worker's
// environment before the worker starts (the mtls refusal test empties the
// client certificate variables with it). Only tests set it; it stays nil
// in every run of the lab.
var editWorkerEnv func(env map[string]string)

// stackOptions are the vendor stack's options of a bench run: the
// resolved profile folder, its server delay and keepalive_timeout, and
// the transport's scheme and HTTP version (nginx offers h2 for "2").
func (c Config) stackOptions(profile string, images vendormock.Images, workDir string, w io.Writer) vendormock.Options {
	return vendormock.Options{
		ProfileDir: profile, ServerDelayMS: c.ServerDelayMS, KeepaliveTimeout: c.KeepaliveTimeout,
		Scheme: vendormock.Scheme(c.Scheme), HTTPVersion: c.HTTPVersion, Images: images,
		WorkDir: workDir, Log: lab.PrefixWriter{W: w, Prefix: "[stack] "}, BrokerNodes: c.BrokerNodes, Session: c.Session,
		RateLimit: c.RateLimit, TLSResumption: c.TLSResumption == "on",
	}
}
