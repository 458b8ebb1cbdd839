package vendorapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/notifier-lab/notifier-lab/worker/message"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// vendorHost is the vendor's name in tests: the SAN of the test server
// certificate and the host of the base URL. Config.Dial maps it to a local
// listener; nothing resolves it.
const vendorHost = "api.vendor.test"

const (
	testClientID = "lab-client"
	testSecret   = "s3cr3t-never-printed"
	testPhone    = "+821000005678"
)

var testCreds = Credentials{ClientID: testClientID, ClientSecret: testSecret}

// testPKI is a CA made at test time with crypto/x509 and a server
// certificate for vendorHost signed by it. Nothing is written to disk.
type testPKI struct {
	pool *x509.CertPool
	leaf tls.Certificate
}

var (
	pkiOnce          sync.Once
	labPKI, otherPKI testPKI // otherPKI: a CA the client does not trust
)

// pkis returns the two PKIs, made once per test binary (t may be nil).
func pkis(t testing.TB) (lab, other testPKI) {
	if t != nil {
		t.Helper()
	}
	pkiOnce.Do(func() {
		labPKI = newPKI("notifier-lab test CA")
		otherPKI = newPKI("untrusted test CA")
	})
	return labPKI, otherPKI
}

func newPKI(caName string) testPKI {
	must := func(err error) {
		if err != nil {
			panic(fmt.Sprintf("make test pki: %v", err))
		}
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(err)
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: caName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	must(err)
	caCert, err := x509.ParseCertificate(caDER)
	must(err)

	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(err)
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: vendorHost},
		DNSNames:     []string{vendorHost},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caCert, &leafKey.PublicKey, caKey)
	must(err)
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return testPKI{pool: pool, leaf: tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}}
}

// dialer is the Config.Dial of a test: dial number i (1-based) goes to
// route(i), so a test can send the token call to one server and the send
// to another fault. It counts dials.
type dialer struct {
	n        atomic.Int64
	route    func(i int64) string
	resolver *net.Resolver // nil: the default
}

func (d *dialer) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	i := d.n.Add(1)
	nd := net.Dialer{Resolver: d.resolver}
	return nd.DialContext(ctx, network, d.route(i))
}

// to routes every dial to addr.
func to(addr string) func(int64) string { return func(int64) string { return addr } }

// firstThen routes dial 1 (the token call under per-request) to first and
// every later dial to then.
func firstThen(first, then string) func(int64) string {
	return func(i int64) string {
		if i == 1 {
			return first
		}
		return then
	}
}

// baseConfig is the Config tests start from: the lab CA, short timeouts.
func baseConfig(t testing.TB, d *dialer) Config {
	lab, _ := pkis(t)
	return Config{
		RootCAs:             lab.pool,
		Dial:                d.dial,
		DialTimeout:         2 * time.Second,
		TLSHandshakeTimeout: 2 * time.Second,
		ResponseTimeout:     3 * time.Second,
	}
}

// newTestClient builds a Client for https://vendorHost on the named
// strategy and closes it at the end of the test.
func newTestClient(t testing.TB, strategy string, cfg Config, opts ...Option) *Client {
	t.Helper()
	mk, ok := Strategies()[strategy]
	if !ok {
		t.Fatalf("no strategy %q", strategy)
	}
	c := NewClient("https://"+vendorHost, testCreds, mk(cfg), opts...)
	t.Cleanup(func() { c.Close() })
	return c
}

// note returns a valid notification with refkey ref.
func note(ref string) message.Notification {
	return message.Notification{
		RefKey: ref, Category: message.Info, Recipient: testPhone,
		TemplateCode: "SHIP_01", Text: "Your order shipped", CreatedAt: time.Now(),
	}
}

// fakeVendor is an httptest TLS server speaking the vendor API. onMessage
// decides each POST /v3/message answer (n counts message calls from 1);
// nil answers success. onToken, when set, runs in each POST /v1/token
// (n counts token calls from 1) before it is answered.
type fakeVendor struct {
	srv *httptest.Server

	tokenStatus   int    // 0 = 200
	tokenBody     string // "" = a valid token answer
	tokenLifetime time.Duration
	now           func() time.Time
	onMessage     func(w http.ResponseWriter, r *http.Request, n int64)
	onToken       func(n int64)

	tokenCalls   atomic.Int64
	messageCalls atomic.Int64
	otherCalls   atomic.Int64
	connsNew     atomic.Int64
	connsClosed  atomic.Int64

	mu       sync.Mutex
	bearers  []string        // Authorization of each message call
	requests []*http.Request // each message call (headers only)
	bodies   [][]byte
	tokens   []string // Basic auth user:pass of each token call
	tlsVers  []uint16 // TLS version of each request
	resumed  []bool   // each request's connection resumed a TLS session (server side)
	protos   []int    // ProtoMajor of each request
}

// vendorOpt adjusts a fakeVendor before it starts.
type vendorOpt func(*fakeVendor, *httptest.Server, *tls.Config)

func withServerTLS(min, max uint16) vendorOpt {
	return func(_ *fakeVendor, _ *httptest.Server, c *tls.Config) { c.MinVersion, c.MaxVersion = min, max }
}

func withHTTP2() vendorOpt {
	return func(_ *fakeVendor, s *httptest.Server, _ *tls.Config) { s.EnableHTTP2 = true }
}

func withCert(c tls.Certificate) vendorOpt {
	return func(_ *fakeVendor, _ *httptest.Server, tc *tls.Config) { tc.Certificates = []tls.Certificate{c} }
}

func startVendor(t testing.TB, opts ...vendorOpt) *fakeVendor {
	t.Helper()
	lab, _ := pkis(t)
	v := &fakeVendor{tokenLifetime: time.Hour, now: time.Now}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(v.serve))
	tc := &tls.Config{Certificates: []tls.Certificate{lab.leaf}}
	for _, o := range opts {
		o(v, srv, tc)
	}
	srv.TLS = tc
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			v.connsNew.Add(1)
		case http.StateClosed, http.StateHijacked:
			v.connsClosed.Add(1)
		}
	}
	srv.Config.ErrorLog = quietLog()
	srv.StartTLS()
	v.srv = srv
	t.Cleanup(srv.Close)
	return v
}

func (v *fakeVendor) addr() string { return v.srv.Listener.Addr().String() }

func (v *fakeVendor) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	v.mu.Lock()
	if r.TLS != nil {
		v.tlsVers = append(v.tlsVers, r.TLS.Version)
		v.resumed = append(v.resumed, r.TLS.DidResume)
	}
	v.protos = append(v.protos, r.ProtoMajor)
	v.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == TokenPath:
		n := v.tokenCalls.Add(1)
		user, pass, _ := r.BasicAuth()
		v.mu.Lock()
		v.tokens = append(v.tokens, user+":"+pass)
		v.mu.Unlock()
		if v.onToken != nil {
			v.onToken(n)
		}
		if v.tokenStatus != 0 && v.tokenStatus != http.StatusOK {
			w.WriteHeader(v.tokenStatus)
			return
		}
		if user != testClientID || pass != testSecret {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if v.tokenBody != "" {
			io.WriteString(w, v.tokenBody)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{
			"accesstoken": fmt.Sprintf("tok-%d", n),
			"type":        "Bearer",
			"expired":     v.now().Add(v.tokenLifetime).Format(time.RFC3339),
		})
	case r.Method == http.MethodPost && r.URL.Path == MessagePath:
		n := v.messageCalls.Add(1)
		v.mu.Lock()
		v.bearers = append(v.bearers, r.Header.Get("Authorization"))
		v.requests = append(v.requests, r)
		v.bodies = append(v.bodies, body)
		v.mu.Unlock()
		if v.onMessage != nil {
			v.onMessage(w, r, n)
			return
		}
		answer(w, http.StatusOK, SuccessCode, r)
	default:
		v.otherCalls.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}
}

// answer writes the vendor's JSON answer with business code code.
func answer(w http.ResponseWriter, status int, code string, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	desc := "success"
	if code != SuccessCode {
		desc = "rejected"
	}
	json.NewEncoder(w).Encode(map[string]string{
		"code": code, "description": desc, "refkey": r.Header.Get("X-Refkey"), "messagekey": "mk-" + r.Header.Get("X-Refkey"),
	})
}

// waitFor polls cond every 5 ms until it holds or d passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("timed out after %s waiting for %s", d, what)
		case <-tick.C:
		}
	}
}

// quietLog drops the test servers' own logs (TLS handshake errors the
// fault tests cause on purpose).
func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }

// asSendError fails the test unless err is a *SendError.
func asSendError(t testing.TB, err error) *SendError {
	t.Helper()
	se, ok := errors.AsType[*SendError](err)
	if !ok {
		t.Fatalf("error %v (%T) is not a *SendError", err, err)
	}
	return se
}
