package scenarios

import (
	"fmt"
	"io"
	"strconv"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
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

// Transport returns the Config's transport.
func (c Config) Transport() Transport {
	return Transport{Scheme: vendormock.Scheme(c.Scheme), Concurrency: c.Concurrency, HTTPVersion: c.HTTPVersion, PoolSize: c.PoolSize}
}

// normal returns t with its defaults filled in.
func (t Transport) normal() Transport {
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

// WorkerArgs are the notifier-worker flags of the transport:
// -concurrency, -http-version, and -pool-size when set (the worker's
// default pool is the concurrency).
func (t Transport) WorkerArgs() []string {
	t = t.normal()
	args := []string{"-concurrency", strconv.Itoa(t.Concurrency), "-http-version", t.HTTPVersion}
	if t.PoolSize > 0 {
		args = append(args, "-pool-size", strconv.Itoa(t.PoolSize))
	}
	return args
}

// PoolFor is the idle pool a client strategy runs with: PoolSize, or the
// concurrency when 0, for pooled; 0 for per-request (it keeps none).
func (t Transport) PoolFor(mode string) int {
	if mode != vendorapi.PooledName {
		return 0
	}
	t = t.normal()
	if t.PoolSize > 0 {
		return t.PoolSize
	}
	return t.Concurrency
}

// protocols counts the send requests (POST SendPath) of entries by nginx's
// $server_protocol ("HTTP/1.1", "HTTP/2.0").
func protocols(entries []vendormock.AccessEntry) map[string]int {
	out := map[string]int{}
	for _, e := range entries {
		if e.Method == "POST" && e.Path == SendPath {
			out[e.ServerProtocol]++
		}
	}
	return out
}

// String is the transport as the lab's keys write it, e.g. "SCHEME=https
// CONCURRENCY=1 HTTP_VERSION=1.1 POOL_SIZE=0".
func (t Transport) String() string {
	t = t.normal()
	return fmt.Sprintf("SCHEME=%s CONCURRENCY=%d HTTP_VERSION=%s POOL_SIZE=%d", t.Scheme, t.Concurrency, t.HTTPVersion, t.PoolSize)
}

// workerEnv returns env with, when withoutCert, the client certificate
// variables set empty, so a worker under mtls starts without the run's
// certificate (the stack adds them otherwise: vendormock.Stack.StartWorker)
// and nginx refuses it (docs/vendor-api.md, status 421).
func (t Transport) workerEnv(env map[string]string, withoutCert bool) map[string]string {
	if withoutCert {
		env["CLIENT_CERT_FILE"], env["CLIENT_KEY_FILE"] = "", ""
	}
	return env
}

// setTransport records the run's transport in r and the protocols nginx
// logged for its sends.
func (r *Result) setTransport(t Transport, mode string, entries []vendormock.AccessEntry) {
	t = t.normal()
	r.Scheme, r.Concurrency, r.HTTPVersion, r.PoolSize = string(t.Scheme), t.Concurrency, t.HTTPVersion, t.PoolFor(mode)
	r.Protocols = protocols(entries)
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
	t = t.normal()
	if mode != vendorapi.PooledName || t.PoolSize == t.Concurrency {
		t.PoolSize = 0
	}
	return t
}

// suffix names a transport away from the default in file names: "" for
// https at concurrency 1 over HTTP/1.1 with the default pool, else
// "-<scheme>-c<N>", then "-h2" and "-pool<P>" when set.
func (t Transport) suffix() string {
	t = t.normal()
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

// stackOptions are the vendor stack's options of a bench run: the
// resolved profile folder, its server delay and keepalive_timeout, and
// the transport's scheme and HTTP version (nginx offers h2 for "2").
func (c Config) stackOptions(profile string, images vendormock.Images, workDir string, w io.Writer) vendormock.Options {
	return vendormock.Options{
		ProfileDir: profile, ServerDelayMS: c.ServerDelayMS, KeepaliveTimeout: c.KeepaliveTimeout,
		Scheme: vendormock.Scheme(c.Scheme), HTTPVersion: c.HTTPVersion, Images: images,
		WorkDir: workDir, Log: lab.PrefixWriter{W: w, Prefix: "[stack] "},
	}
}
