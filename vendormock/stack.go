// Package vendormock runs the lab's vendor side with testcontainers-go: one
// Docker network per run with RabbitMQ, WireMock (the vendor API stubs),
// nginx (TLS termination, access log) and Toxiproxy (latency) in front of
// nginx under the vendor's host name.
//
// CONTRACT STUB (written by the lead): keep the exported names and
// signatures, fill in the bodies; split into files (certs, nginx, wiremock,
// toxiproxy, accesslog, profile, images).
package vendormock

import (
	"context"
	"crypto/x509"
	"io"
	"time"
)

// Images names the container images of one run. They are built or pulled
// by vendormock/images/ensure-images.sh, which writes them to
// .lab/images.env as LAB_IMAGE_RABBITMQ, LAB_IMAGE_NGINX, LAB_IMAGE_WIREMOCK,
// LAB_IMAGE_TOXIPROXY, LAB_IMAGE_WORKER (and LAB_IMAGES_KIND=official|offline).
type Images struct {
	Kind                                         string // "official" or "offline"
	RabbitMQ, Nginx, WireMock, Toxiproxy, Worker string
}

// ImagesFromEnv reads Images from the environment. The error names every
// missing variable and says to run ./run.sh (which builds them).
func ImagesFromEnv() (Images, error) { panic("TODO") }

// Options configure Start.
type Options struct {
	ProfileDir       string        // default DefaultProfileDir
	ServerDelayMS    int           // WireMock fixed delay on POST /v3/message, ms; <0 = profile's
	KeepaliveTimeout time.Duration // nginx keepalive_timeout; 0 = profile's
	Images           Images
	WorkDir          string    // host dir for certs, nginx.conf and the access log; created
	Log              io.Writer // progress lines ("rabbitmq ready in 9.8 s"); nil = discard
}

// DefaultProfileDir is the vendor profile the lab uses by default, relative
// to the repository root.
const DefaultProfileDir = "vendormock/profiles/alimtalk"

// Stack is a running vendor side. All URLs marked host are reachable from
// the host through 127.0.0.1 published ports; those marked network only from
// containers on Network.
type Stack struct {
	Network          string // Docker network name, unique per run
	VendorHost       string // e.g. "api.vendor.test": Toxiproxy's alias and the certificate SAN
	VendorURL        string // network: "https://api.vendor.test"
	AMQPURL          string // host: amqp://guest:guest@127.0.0.1:PORT/
	AMQPURLNetwork   string // network: amqp://guest:guest@rabbitmq:5672/
	WireMockURL      string // host: http://127.0.0.1:PORT (admin API at /__admin)
	ToxiproxyURL     string // host: http://127.0.0.1:PORT (Toxiproxy API)
	CAFile           string // host path of the lab CA certificate (PEM); no key is written
	CAPool           *x509.CertPool
	ClientID         string        // vendor credentials, generated per run
	ClientSecret     string        // never logged
	AccessLogPath    string        // host path of nginx's access log (bind mount)
	KeepaliveTimeout time.Duration // nginx keepalive_timeout in effect
	StartDuration    time.Duration // cold start: Start called to all four ready
}

// Start creates the network, the CA and certificates, and the four
// containers, waits until each is really ready, and registers the stubs.
// On error everything already started is removed.
func Start(ctx context.Context, opts Options) (*Stack, error) { panic("TODO") }

// Close removes the containers and the network. Safe to call twice.
func (s *Stack) Close(ctx context.Context) error { panic("TODO") }

// SetRTT replaces the latency toxics so a round trip through Toxiproxy costs
// rttMS: rttMS/2 downstream and the rest upstream (whole ms). 0 removes them.
func (s *Stack) SetRTT(ctx context.Context, rttMS int) error { panic("TODO") }

// SelfCheck sends a probe through Toxiproxy on an established TLS connection
// and returns its round trip; it errors when the round trip is below rttMS
// (a toxic silently not applied must not produce numbers).
func (s *Stack) SelfCheck(ctx context.Context, rttMS int) (time.Duration, error) { panic("TODO") }

// ResetJournal empties WireMock's request journal.
func (s *Stack) ResetJournal(ctx context.Context) error { panic("TODO") }

// JournalEntry is one request WireMock received.
type JournalEntry struct {
	Method, Path string
	RefKey       string // from the JSON body, "" when absent
	Status       int
	LoggedAt     time.Time
}

// Journal returns every request in WireMock's journal.
func (s *Stack) Journal(ctx context.Context) ([]JournalEntry, error) { panic("TODO") }

// AccessLogSize returns the current size of the access log in bytes (an
// offset for ReadAccessLog).
func (s *Stack) AccessLogSize() (int64, error) { panic("TODO") }

// ReadAccessLog parses the access log from byte offset from.
func (s *Stack) ReadAccessLog(from int64) ([]AccessEntry, []byte, error) { panic("TODO") }

// AccessEntry is one parsed nginx access log line.
type AccessEntry struct {
	Connection    int64  // $connection: nginx's connection serial number
	Request       int    // $connection_requests: request number on that connection
	TLSProtocol   string // $ssl_protocol: "TLSv1.2", "TLSv1.3"
	SessionReused bool   // $ssl_session_reused == "r"
	Status        int
	RequestTime   float64 // $request_time, s
	UpstreamTime  float64 // $upstream_response_time, s; -1 when "-"
	Method, Path  string
	RefKey        string // $http_x_refkey, "" when "-"
}

// ParseAccessLog parses lines in the lab's log_format.
func ParseAccessLog(r io.Reader) ([]AccessEntry, error) { panic("TODO") }

// WorkerOptions start the worker binary in a container on the stack's network.
type WorkerOptions struct {
	Name   string            // container name suffix, e.g. "pooled-10ms"
	Args   []string          // worker flags
	Env    map[string]string // e.g. GOMAXPROCS
	CPUs   float64           // CPU limit (NanoCPUs); 1 in the lab
	OutDir string            // host dir bind-mounted at /out (records, ledger)
}

// Worker is a running worker container.
type Worker struct{}

// StartWorker starts the worker image with the CA file at /lab/ca.pem.
func (s *Stack) StartWorker(ctx context.Context, o WorkerOptions) (*Worker, error) { panic("TODO") }

// Wait waits for the worker to exit and returns its exit code.
func (w *Worker) Wait(ctx context.Context) (int, error) { panic("TODO") }

// Stop sends SIGTERM, waits up to timeout, then kills; removes the container.
func (w *Worker) Stop(ctx context.Context, timeout time.Duration) error { panic("TODO") }

// Logs returns the worker's stdout and stderr so far.
func (w *Worker) Logs(ctx context.Context) (string, error) { panic("TODO") }
