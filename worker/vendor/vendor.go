// Package vendor is the worker's HTTP client for the messaging vendor: the
// token call, the send call, the client strategies (per-request, pooled), the
// per-send httptrace timings, and the classification of every failure into
// the delivery classes of DESIGN.md.
//
// CONTRACT STUB (written by the lead): keep the exported names and
// signatures, fill in the bodies; split into one file per strategy.
package vendor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/message"
)

// Class is the delivery class of one send attempt.
type Class string

const (
	Sent     Class = "SENT"     // the vendor accepted it
	Rejected Class = "REJECTED" // the vendor answered and refused it
	NotSent  Class = "NOT_SENT" // provably never left the worker
	Unknown  Class = "UNKNOWN"  // may have reached the vendor
)

// ErrClientClosed is returned (inside a *SendError of class NotSent) for a
// send attempted after the client or strategy was closed. Nothing is dialled.
var ErrClientClosed = errors.New("vendor client closed")

// SendError is the one typed error of this package: it carries the class the
// caller acts on.
type SendError struct {
	Class Class
	Op    string // "token" or "send"
	// Code is the vendor's business code, or the HTTP status as text when
	// there is no business code, or "" when no response was read.
	Code string
	Err  error
}

func (e *SendError) Error() string { panic("TODO") }
func (e *SendError) Unwrap() error { return e.Err }

// ClassOf returns Sent for nil, the class of a *SendError anywhere in err's
// chain, and Unknown for any other error (the conservative choice).
func ClassOf(err error) Class { panic("TODO") }

// Strategy names.
const (
	PerRequestName = "per-request"
	PooledName     = "pooled"
)

// Config is what every strategy is built from. Durations are wall time.
type Config struct {
	RootCAs       *x509.CertPool // verify the vendor against these; nil = system roots
	ServerName    string         // TLS SNI / verification name override; "" = URL host
	MinTLSVersion uint16         // 0 = tls.VersionTLS12
	MaxTLSVersion uint16         // 0 = highest supported
	// Dial overrides how TCP connections are made (tests; mapping the
	// vendor host to a lab address). nil = net.Dialer{Timeout: DialTimeout}.
	Dial                func(ctx context.Context, network, addr string) (net.Conn, error)
	DialTimeout         time.Duration // default DefaultDialTimeout
	TLSHandshakeTimeout time.Duration // default DefaultTLSHandshakeTimeout
	ResponseTimeout     time.Duration // whole call incl. body; default DefaultResponseTimeout
	IdleConnTimeout     time.Duration // pooled only; default DefaultIdleConnTimeout
	MaxIdleConnsPerHost int           // pooled only; default 1 (concurrency 1)
}

// Defaults. DefaultIdleConnTimeout sits below nginx's default
// keepalive_timeout (75 s) by far more than one RTT.
const (
	DefaultDialTimeout         = 3 * time.Second
	DefaultTLSHandshakeTimeout = 3 * time.Second
	DefaultResponseTimeout     = 10 * time.Second
	DefaultIdleConnTimeout     = 60 * time.Second
)

// TLSVersionName returns "TLS 1.2" / "TLS 1.3" / "" for 0.
func TLSVersionName(v uint16) string { return tls.VersionName(v) }

// Strategy hands out the *http.Client used for one call.
type Strategy interface {
	// Name is PerRequestName or PooledName.
	Name() string
	// Client returns the client for one call and a release func to call
	// once the response body is closed. After Close it returns
	// ErrClientClosed.
	Client() (*http.Client, func(), error)
	// Close releases all connections. Safe to call twice.
	Close() error
}

// Strategies returns the constructors by name (a fresh map: no global
// registry).
func Strategies() map[string]func(Config) Strategy { panic("TODO") }

// Trace is what httptrace saw during one send (the POST /v3/message call,
// not the token call). Times are milliseconds.
type Trace struct {
	TotalMS        float64 `json:"total_ms"`
	ConnectMS      float64 `json:"connect_ms"`       // 0 when reused
	TLSHandshakeMS float64 `json:"tls_handshake_ms"` // 0 when reused
	TTFBMS         float64 `json:"ttfb_ms"`          // request start to first response byte
	Reused         bool    `json:"reused"`
	TLSVersion     string  `json:"tls_version"` // "TLS 1.2", "TLS 1.3"
	GotConns       int     `json:"got_conns"`   // >1: the transport retried on another conn
	WroteRequest   bool    `json:"wrote_request"`
	TokenFetched   bool    `json:"token_fetched"` // this send fetched a token first
}

// Result is a successful send.
type Result struct {
	Code       string `json:"code"`       // vendor business code, "1000"
	MessageKey string `json:"messagekey"` // vendor's id for the message
	Trace      Trace  `json:"trace"`
}

// Credentials authenticate the token call (HTTP Basic). String redacts.
type Credentials struct{ ClientID, ClientSecret string }

func (c Credentials) String() string { return c.ClientID + ":<redacted>" }

// Client calls the vendor API. One Client per worker; not safe for
// concurrent Send (the worker has concurrency 1).
type Client struct{}

// Option configures a Client.
type Option func(*Client)

// WithIdempotencyHeader makes every send carry header name = refkey. Only
// for vendors that de-duplicate on it: Go's transport replays a POST that
// carries Idempotency-Key / X-Idempotency-Key on its own.
func WithIdempotencyHeader(name string) Option { panic("TODO") }

// WithCorrelationHeader sets the header that carries the refkey for logs
// (default "X-Refkey"; nginx logs it). It is not an idempotency key.
func WithCorrelationHeader(name string) Option { panic("TODO") }

// NewClient returns a client for the vendor at baseURL ("https://host[:port]").
func NewClient(baseURL string, creds Credentials, s Strategy, opts ...Option) *Client {
	panic("TODO")
}

// Send POSTs n to /v3/message, fetching or refreshing the bearer token as
// needed (once at start, again when expired, one refetch on 401). A nil
// error means SENT. Any other error is a *SendError. Result.Trace is filled
// on error too (what httptrace saw before the failure).
func (c *Client) Send(ctx context.Context, n message.Notification) (Result, error) {
	panic("TODO")
}

// Close closes the strategy; later sends fail NotSent with ErrClientClosed.
func (c *Client) Close() error { panic("TODO") }
