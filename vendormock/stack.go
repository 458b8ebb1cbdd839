package vendormock

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/wiremock/go-wiremock"
)

// Images names the container images of one run. They are built or pulled
// by vendormock/images/ensure-images.sh, which writes them to
// .lab/images.env as LAB_IMAGE_RABBITMQ, LAB_IMAGE_NGINX, LAB_IMAGE_WIREMOCK,
// LAB_IMAGE_TOXIPROXY, LAB_IMAGE_WORKER (and LAB_IMAGES_KIND=official|offline).
// The offline images keep the official images' contracts (ports, config
// paths, arguments), so only the names differ.
type Images struct {
	Kind                                         string // "official" or "offline"
	RabbitMQ, Nginx, WireMock, Toxiproxy, Worker string
	// Postgres is the PostgreSQL image of replicas on LEDGER=postgres
	// (EnvPostgresImage); "" leaves the choice to StartPostgres.
	Postgres string
	// StreamReset is the stream-reset fault proxy's image
	// (EnvImageStreamReset); only StartStreamReset needs it.
	StreamReset string
	// References are the reference workers' images by their variable
	// (EnvImageWorkerNode, EnvImageWorkerJava), for WorkerImage.
	References map[string]string
}

// Var returns the image named by variable name (EnvImageRabbitMQ, ...,
// EnvImageWorkerNode): what ImagesFrom read for it, "" when unset. It is
// the lookup WorkerImage takes.
func (im Images) Var(name string) string {
	switch name {
	case EnvImagesKind:
		return im.Kind
	case EnvImageRabbitMQ:
		return im.RabbitMQ
	case EnvImageNginx:
		return im.Nginx
	case EnvImageWireMock:
		return im.WireMock
	case EnvImageToxiproxy:
		return im.Toxiproxy
	case EnvImageWorker:
		return im.Worker
	case EnvPostgresImage:
		return im.Postgres
	case EnvImageStreamReset:
		return im.StreamReset
	}
	return im.References[name]
}

// Options configure Start.
type Options struct {
	ProfileDir string // default DefaultProfileDir
	// ServerDelayMS is WireMock's fixed delay on the stubs marked
	// server_delay (POST /v3/message), ms; < 0 = the profile's
	// (wiremock.server_delay_ms, 18 in the case). Note 0 means no delay.
	ServerDelayMS    int
	KeepaliveTimeout time.Duration // nginx keepalive_timeout; 0 = profile's
	// Scheme is how the worker reaches nginx: SchemeHTTP, SchemeHTTPS or
	// SchemeMTLS; "" = SchemeHTTPS.
	Scheme Scheme
	// HTTPVersion is "1.1" or "2" (nginx offers h2 through ALPN; TLS
	// schemes only); "" = "1.1".
	HTTPVersion string
	Images      Images
	// WorkDir is the host dir for certs (tls/), nginx.conf (nginx/) and the
	// access log (log/); created. "" = a new temporary dir.
	WorkDir string
	Log     io.Writer // progress lines ("rabbitmq ready in 9.8 s"); nil = discard
	// BrokerNodes is the number of RabbitMQ nodes: 0 or 1 = one node (as
	// always), 2..MaxBrokerNodes = a cluster of that many from the same
	// image, each on the run's network by its own alias ("rabbitmq-1",
	// ...; node 1 also "rabbitmq"); see Stack.Brokers. The lab's
	// BROKER_NODES.
	BrokerNodes int
	// Session is the value of LabelSession on every container, network
	// and volume of the run (run.sh's LAB_SESSION, EnvSession, read by
	// the command or test at its edge); "" = no session label.
	Session string
	// RateLimit is the vendor's sends per second for the whole account,
	// enforced by nginx (Profile.RateLimit): 0 = the profile's
	// rate_limit.sends_per_second (none when it has none), > 0 overrides
	// it. The lab's RATE_LIMIT.
	RateLimit int
	// NoRequestJournal starts WireMock with --no-request-journal: it keeps
	// no request in memory, and the vendor's record of a run is nginx's
	// access log (Stack.AccessJournal) instead of WireMock's journal. For
	// long runs: WireMock holds every request it served on its heap, and
	// at ~150,000 requests in one run it answered too slowly for nginx
	// (504s) and its journal could no longer be read (the scale
	// benchmark's memory run, docs/running.md#the-committed-run-and-its-memory-run).
	NoRequestJournal bool
	// NoUpstreamKeepalive turns nginx's upstream keep-alive to WireMock
	// off: a new upstream connection per request, study A's fifth
	// pitfall (docs/studies.md); the lab's UPSTREAM_KEEPALIVE=off.
	NoUpstreamKeepalive bool
	// UpstreamKeepalive, above 0, is how many idle connections to
	// WireMock nginx keeps (its upstream "keepalive"), instead of the
	// profile's nginx.upstream_keepalive. nginx closes an idle connection
	// beyond it as soon as a request ends (the least recently used), so
	// a pool smaller than the requests in flight opens and closes
	// connections to WireMock under bursts (the scale benchmark,
	// docs/running.md#the-scale-benchmark). Ignored under
	// NoUpstreamKeepalive.
	UpstreamKeepalive int
	// KeepaliveHint makes nginx send "Keep-Alive: timeout=N" (the second
	// keepalive_timeout parameter) whatever the profile says.
	KeepaliveHint bool
	// TLSResumption turns nginx's ssl_session_cache and
	// ssl_session_tickets on whatever the profile's tls.session_cache and
	// tls.session_tickets say (both off in the lab's profiles, as in the
	// case). The lab's TLS_RESUMPTION.
	TLSResumption bool
}

// DefaultProfileDir is the vendor profile the lab uses by default, relative
// to the repository root.
const DefaultProfileDir = "vendormock/profiles/alimtalk"

// Network aliases on the run's network (the vendor host is added to
// Toxiproxy from the profile).
const (
	AliasRabbitMQ  = "rabbitmq"
	AliasWireMock  = "wiremock"
	AliasNginx     = "nginx"
	AliasToxiproxy = "toxiproxy"
)

// ProxyName is the Toxiproxy proxy that carries vendor traffic: it listens
// on 0.0.0.0:443 in the Toxiproxy container and forwards to nginx:443.
const ProxyName = "vendor"

// LabelRun is the Docker label (value: the run id) on every container and
// network a Stack creates.
const LabelRun = "org.notifier-lab.run"

// LabelSession is the Docker label whose value is Options.Session (run.sh
// sets the environment variable EnvSession to one value per invocation and
// the lab passes it on) on every container and network a Stack creates. run.sh's exit trap removes
// what carries its own value after a killed run, and nothing of another
// invocation: docker rm -f $(docker ps -aq --filter
// label=org.notifier-lab.session=$LAB_SESSION).
const LabelSession = "org.notifier-lab.session"

// EnvSession names the environment variable commands read for
// Options.Session.
const EnvSession = "LAB_SESSION"

// labels returns the labels of this stack's containers and network.
func (s *Stack) labels() map[string]string {
	l := map[string]string{LabelRun: s.RunID}
	if s.session != "" {
		l[LabelSession] = s.session
	}
	return l
}

// DefaultReadyTimeout bounds each service's readiness wait.
const DefaultReadyTimeout = 90 * time.Second

// ErrNotReady is returned (wrapped with the service name) when a service
// does not become ready within DefaultReadyTimeout.
var ErrNotReady = errors.New("service not ready")

// Stack is a running vendor side. All URLs marked host are reachable from
// the host through 127.0.0.1 published ports; those marked network only from
// containers on Network.
type Stack struct {
	Network        string // Docker network name, unique per run
	VendorHost     string // e.g. "api.vendor.test": Toxiproxy's alias and the certificate SAN
	VendorURL      string // network: "https://api.vendor.test" ("http://api.vendor.test:443" for SchemeHTTP)
	AMQPURL        string // host: amqp://guest:guest@127.0.0.1:PORT/
	AMQPURLNetwork string // network: amqp://guest:guest@rabbitmq:5672/ (node 1 on a cluster)
	// AMQPURLsNetwork is network: every broker node's AMQP URL,
	// comma-separated (the worker's AMQP_URL, so it can reach any node);
	// equal to AMQPURLNetwork on one node.
	AMQPURLsNetwork string
	WireMockURL     string // host: http://127.0.0.1:PORT (admin API at /__admin)
	ToxiproxyURL    string // host: http://127.0.0.1:PORT (Toxiproxy API)
	CAFile          string // host path of the lab CA certificate (PEM); no key is written
	CAPool          *x509.CertPool
	ClientID        string // vendor credentials, generated per run
	ClientSecret    string // never logged
	AccessLogPath   string // host path of nginx's access log (bind mount)
	ErrorLogPath    string // host path of nginx's error log, info level (ReadErrorLog)
	// NoUpstreamKeepalive: nginx keeps no connection to WireMock
	// (Options.NoUpstreamKeepalive).
	NoUpstreamKeepalive bool
	// KeepaliveHint: nginx sends "Keep-Alive: timeout=N" (Options.KeepaliveHint
	// or the profile's nginx.keepalive_hint).
	KeepaliveHint    bool
	KeepaliveTimeout time.Duration // nginx keepalive_timeout in effect
	RateLimit        int           // the vendor's sends/s in effect; 0 = none
	// NoRequestJournal: WireMock keeps no request journal
	// (Options.NoRequestJournal); Journal fails with journal.ErrDisabled,
	// ResetJournal does nothing, and AccessJournal is the vendor's record.
	NoRequestJournal bool
	StartDuration    time.Duration // cold start: Start called to all four ready

	// VendorAddrHost is host: 127.0.0.1:PORT of Toxiproxy's vendor listener
	// (through the latency toxics). Dial it with TLS ServerName VendorHost
	// (HostTLSConfig) or use HostClient.
	VendorAddrHost string
	// ReportsAddrHost is host: 127.0.0.1:PORT of Toxiproxy's ReportsProxyPort:
	// the report relay pushes through it to a proxy the caller creates
	// there (AddProxy(..., ReportsProxyPort, "<worker alias>:9090", ...)),
	// so reports can be delayed or cut like any other traffic.
	ReportsAddrHost string
	// NginxAddrHost is host: 127.0.0.1:PORT of nginx's 443, bypassing
	// Toxiproxy (diagnostics only).
	NginxAddrHost string
	// ServerDelayMS is WireMock's fixed delay on the send in effect, ms.
	ServerDelayMS int
	// Scheme and HTTP2 are the vendor transport in effect.
	Scheme Scheme
	HTTP2  bool
	// ClientCertFile and ClientKeyFile are host paths of the worker's
	// client certificate and key for SchemeMTLS (issued per run by the
	// run's CA; the key is 0600 and never logged); "" otherwise. StartWorker
	// and the replicas mount them at WorkerClientCertPath and
	// WorkerClientKeyPath.
	ClientCertFile, ClientKeyFile string
	// Profile is the vendor profile in use (client defaults, API paths).
	Profile *Profile
	// Ready is each service's ready time from Start's call: "rabbitmq",
	// "wiremock", "nginx", "toxiproxy", "stubs".
	Ready map[string]time.Duration
	// RunID is the value of LabelRun on this run's containers and network.
	RunID string
	// WorkDir is the absolute work dir in use.
	WorkDir string

	accessToken string
	imageWorker string
	session     string // Options.Session
	imagePG     string // Options.Images.Postgres
	nw          *testcontainers.DockerNetwork
	mu          sync.Mutex // guards containers, workers, volumes, docker, closed
	containers  map[string]testcontainers.Container
	brokers     []BrokerNode // guarded by mu
	workers     []*Worker
	volumes     []string                     // named volumes to remove on Close
	docker      *testcontainers.DockerClient // Kill, volumes, images; nil until used
	closed      bool
	pgMu        sync.Mutex // guards pg; held while PostgreSQL starts
	pg          *Postgres
	wm          *wiremock.Client
	toxi        *toxiproxy.Client
	proxy       *toxiproxy.Proxy
	adminHTTP   *http.Client
	logMu       sync.Mutex
	log         io.Writer
}

// Start creates the network, the CA and certificates, and the four
// containers, waits until each is really ready, and registers the stubs.
// RabbitMQ, the WireMock→nginx pair and Toxiproxy start concurrently; nginx
// follows WireMock because it resolves the upstream name at start. Ready
// means: RabbitMQ logged "Server startup complete"; WireMock's
// /__admin/health answered 200; nginx answered ProbePath over TLS verified
// against the run's CA (with the client certificate under SchemeMTLS;
// plain HTTP under SchemeHTTP); Toxiproxy's /version answered and the vendor proxy
// carries the same TLS probe end to end. Each wait is bounded by
// DefaultReadyTimeout. Cold start is in StartDuration and per-service ready
// times in Ready, also written to opts.Log.
// On error everything already started is removed. Errors: ErrInvalidProfile,
// ErrInvalidStubs, ErrImagesMissing, ErrNotReady (wrapped with the service),
// Docker errors.
func Start(ctx context.Context, opts Options) (s *Stack, err error) {
	t0 := time.Now()
	s = &Stack{
		session:    opts.Session,
		imagePG:    opts.Images.Postgres,
		log:        opts.Log,
		containers: map[string]testcontainers.Container{},
		Ready:      map[string]time.Duration{},
		adminHTTP:  &http.Client{Timeout: 30 * time.Second},
	}
	if s.log == nil {
		s.log = io.Discard
	}
	if err := s.prepare(opts); err != nil {
		return nil, err
	}
	if err := CheckImages(ctx, opts.Images); err != nil {
		return nil, err
	}
	defer closeOnError(ctx, &s, &err)

	s.nw, err = network.New(ctx, network.WithLabels(s.labels()))
	if err != nil {
		return s, fmt.Errorf("create network: %w", err)
	}
	s.Network = s.nw.Name
	s.logf("network %s, work dir %s", s.Network, s.WorkDir)

	var wg sync.WaitGroup
	errs := make([]error, 3)
	wg.Add(3)
	go func() {
		defer wg.Done()
		if opts.BrokerNodes > 1 {
			errs[0] = s.startRabbitMQCluster(ctx, opts.Images.RabbitMQ, opts.BrokerNodes, t0)
			return
		}
		errs[0] = s.startRabbitMQ(ctx, opts.Images.RabbitMQ, t0)
	}()
	go func() {
		defer wg.Done()
		if errs[1] = s.startWireMock(ctx, opts.Images.WireMock, t0); errs[1] == nil {
			errs[1] = s.startNginx(ctx, opts.Images.Nginx, t0)
		}
	}()
	go func() { defer wg.Done(); errs[2] = s.startToxiproxy(ctx, opts.Images.Toxiproxy, t0) }()
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return s, err
	}
	if err := s.registerStubs(); err != nil {
		return s, err
	}
	s.markReady("stubs", t0)
	if err := s.waitVendorPath(ctx); err != nil {
		return s, err
	}
	s.StartDuration = time.Since(t0)
	s.logf("stack ready in %.1f s (cold start)", s.StartDuration.Seconds())
	return s, nil
}

// run starts one container on the run's network with these aliases and
// records it for Close, also when its wait fails (testcontainers returns the
// container then). Every port in req.ExposedPorts ("443/tcp") is published
// on 127.0.0.1 only, on an ephemeral host port (hostAddr reads it).
func (s *Stack) run(ctx context.Context, name string, aliases []string, req testcontainers.ContainerRequest) (testcontainers.Container, error) {
	req.Name = fmt.Sprintf("lab-%s-%s", s.RunID, name)
	req.HostConfigModifier = PublishOnLoopback(req.ExposedPorts, req.HostConfigModifier)
	if req.Labels == nil {
		req.Labels = map[string]string{}
	}
	maps.Copy(req.Labels, s.labels())
	req.Networks = []string{s.nw.Name}
	req.NetworkAliases = map[string][]string{s.nw.Name: aliases}
	c, err := StartContainer(ctx, req)
	if c != nil && !isNilContainer(c) {
		s.mu.Lock()
		s.containers[name] = c
		s.mu.Unlock()
	}
	if err != nil {
		return c, fmt.Errorf("start %s: %w: %w", name, ErrNotReady, err)
	}
	return c, nil
}

// Close removes the workers (replicas included), the containers
// (PostgreSQL included), the ledger volumes and the network, and deletes
// the server key from the work dir (the CA, nginx.conf and the access log
// stay). Safe to call twice; errors of each removal are joined.
func (s *Stack) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	workers := s.workers
	cs := s.containers
	s.containers = map[string]testcontainers.Container{}
	s.mu.Unlock()

	var errs []error
	for _, w := range workers {
		if err := w.Stop(ctx, 5*time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	names := make([]string, 0, len(cs))
	for n := range cs {
		names = append(names, n)
	}
	sort.Strings(names)
	var wg sync.WaitGroup
	cerrs := make([]error, len(names))
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := testcontainers.TerminateContainer(cs[n], testcontainers.StopContext(ctx), testcontainers.StopTimeout(5*time.Second)); err != nil {
				cerrs[i] = fmt.Errorf("remove %s: %w", n, err)
			}
		}()
	}
	wg.Wait()
	errs = append(errs, cerrs...)
	// The containers are gone: nothing uses the volumes any more.
	if err := s.closeVolumes(ctx); err != nil {
		errs = append(errs, err)
	}
	if s.nw != nil {
		if err := s.nw.Remove(ctx); err != nil {
			errs = append(errs, fmt.Errorf("remove network %s: %w", s.Network, err))
		}
	}
	// nginx is gone: its key has no reader left.
	if s.WorkDir != "" {
		if err := os.Remove(filepath.Join(s.WorkDir, "tls", ServerKeyFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove server key: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close stack: %w", err)
	}
	s.logf("stack removed")
	return nil
}

// markReady records and logs a service's ready time.
func (s *Stack) markReady(name string, t0 time.Time) {
	d := time.Since(t0)
	s.mu.Lock()
	s.Ready[name] = d
	s.mu.Unlock()
	s.logf("%s ready in %.1f s", name, d.Seconds())
}

// logf writes one progress line to Options.Log. Never pass secrets.
func (s *Stack) logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.log, "vendormock: "+format+"\n", args...)
}

// randomHex returns 2n random hex digits.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // never fails on Linux
	}
	return hex.EncodeToString(b)
}
