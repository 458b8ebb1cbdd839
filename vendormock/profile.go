package vendormock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ProfileFile is the name of a vendor profile's main file inside its folder.
const ProfileFile = "profile.yaml"

// ErrInvalidProfile is returned (wrapped) by LoadProfile when a profile
// folder cannot be read or breaks a rule; the message lists every problem
// with the YAML key it concerns, e.g. "nginx.keepalive_requests: must be >= 1".
var ErrInvalidProfile = errors.New("invalid vendor profile")

// Profile is one vendor's profile folder (DefaultProfileDir for the lab's
// case): host name, TLS policy, nginx timeouts, WireMock stubs and the
// client-side defaults a worker should use with this vendor. Everything
// vendor-specific lives in the folder, so auditing another vendor means
// adding a folder, not editing code. Field comments give the YAML keys.
type Profile struct {
	// Dir is the folder the profile was loaded from (absolute).
	Dir string `yaml:"-"`
	// Name identifies the profile, e.g. "alimtalk" (name).
	Name string `yaml:"name"`
	// Description is free text (description).
	Description string `yaml:"description"`
	// Host is the vendor's DNS name in the lab, e.g. "api.vendor.test":
	// Toxiproxy's network alias and the server certificate's only SAN (host).
	Host string `yaml:"host"`

	API      APISpec        `yaml:"api"`
	TLS      TLSPolicy      `yaml:"tls"`
	Nginx    NginxSpec      `yaml:"nginx"`
	WireMock WireMockSpec   `yaml:"wiremock"`
	Client   ClientDefaults `yaml:"client"`
	// Reports is the vendor's delivery-report API; nil when the vendor
	// publishes none (reports; docs/vendor-api.md#delivery-reports).
	Reports *ReportsSpec `yaml:"reports"`
	// RateLimit is the vendor's sends per second per account, enforced by
	// nginx (rate_limit); the zero value = none.
	RateLimit RateLimitSpec `yaml:"rate_limit"`

	// Stubs are the WireMock stubs read from WireMock.Stubs, with each
	// body file already read into Response.Body.
	Stubs []StubSpec `yaml:"-"`

	// StatusTableJSON is the profile's status table (StatusTableFile, the
	// worker's vendorapi.StatusTable format) as one JSON document, ready for
	// the worker's VENDOR_STATUS_TABLE; "" when the profile has none (the
	// worker then uses its default table, docs/vendor-api.md#status-table).
	// The worker validates it at start.
	StatusTableJSON string `yaml:"-"`

	// ReportsJSON is Reports as one JSON document, ready for the worker's
	// VENDOR_REPORTS (the worker's vendorapi.ReportSpec reads the same
	// keys and validates it at start); "" when the profile has none.
	ReportsJSON string `yaml:"-"`
}

// RateLimitSpec is a vendor's rate limit on sends (rate_limit): nginx
// limits api.send_path for the whole account (every worker, every
// connection) with limit_req and answers a send above it 429 with a
// Retry-After header, before WireMock sees it (docs/vendor-api.md, Rate
// limit). The token call is not limited.
type RateLimitSpec struct {
	// SendsPerSecond is the limit; 0 = none (sends_per_second).
	SendsPerSecond int `yaml:"sends_per_second"`
	// Burst is how many sends above the rate nginx lets through at once
	// (limit_req burst=N nodelay): a vendor's bucket size; 0 = none, so
	// two sends closer than 1/SendsPerSecond are refused (burst).
	Burst int `yaml:"burst"`
	// RetryAfterS is the Retry-After a refused send gets, whole seconds;
	// 0 = 1 (retry_after_s).
	RetryAfterS int `yaml:"retry_after_s"`
}

// StatusTableFile is the status table's file name inside a profile folder.
const StatusTableFile = "status.yaml"

// APISpec describes the vendor API as the worker and the journal reader see
// it (api).
type APISpec struct {
	TokenPath   string `yaml:"token_path"`   // e.g. "/v1/token"
	SendPath    string `yaml:"send_path"`    // e.g. "/v3/message"
	RefKeyField string `yaml:"refkey_field"` // JSON body field carrying the sender's reference, e.g. "refkey"
	SuccessCode string `yaml:"success_code"` // business "code" of an accepted send, e.g. "1000"
	// TokenAuth is how the token call authenticates: TokenAuthBasic ("" =
	// it; HTTP Basic with id and secret) or TokenAuthForm (OAuth2 client
	// credentials in a form-encoded body) (token_auth).
	TokenAuth string `yaml:"token_auth"`
	// CodeField is the send answer's JSON field carrying the business code;
	// "" = "code" (code_field).
	CodeField string `yaml:"code_field"`
}

// Token authentication styles of APISpec.TokenAuth (docs/worker-contract.md).
const (
	TokenAuthBasic = "basic"
	TokenAuthForm  = "form"
)

// WithDefaults returns a with TokenAuth ("basic") and CodeField ("code")
// set when the profile leaves them out, as the lab hands them to a worker.
func (a APISpec) WithDefaults() APISpec {
	a.TokenAuth, a.CodeField = a.tokenAuth(), a.codeField()
	return a
}

// tokenAuth is TokenAuth with its default.
func (a APISpec) tokenAuth() string {
	if a.TokenAuth == "" {
		return TokenAuthBasic
	}
	return a.TokenAuth
}

// codeField is CodeField with its default.
func (a APISpec) codeField() string {
	if a.CodeField == "" {
		return "code"
	}
	return a.CodeField
}

// TLSPolicy is the vendor front end's TLS policy (tls). Versions are "1.2"
// or "1.3". The case allowed 1.2 and 1.3 with session cache and tickets off,
// so every new connection pays a full TLS handshake
// (docs/case.md#reproduction-settings).
type TLSPolicy struct {
	MinVersion     string `yaml:"min_version"`
	MaxVersion     string `yaml:"max_version"`
	SessionCache   bool   `yaml:"session_cache"`
	SessionTickets bool   `yaml:"session_tickets"`
	// ClientAuth is "required" for a vendor that accepts only clients
	// with a certificate (mutual TLS): the stack then runs SchemeMTLS
	// whenever HTTPS is asked for, and refuses plain HTTP; "" = none
	// (client_auth).
	ClientAuth string `yaml:"client_auth"`
}

// ClientAuthRequired is TLSPolicy.ClientAuth for a vendor that requires
// mutual TLS.
const ClientAuthRequired = "required"

// NginxSpec holds nginx's settings (nginx).
type NginxSpec struct {
	// Template is the nginx.conf Go text/template, relative to the profile
	// folder (template).
	Template string `yaml:"template"`
	// KeepaliveTimeout is nginx's keepalive_timeout for idle client
	// connections; 0 disables keep-alive (nginx's default is 75 s).
	KeepaliveTimeout time.Duration `yaml:"keepalive_timeout"`
	// KeepaliveRequests is nginx's keepalive_requests, the requests one
	// connection may carry (default 1000 since nginx 1.19.10;
	// docs/environment.md#nginx).
	KeepaliveRequests int `yaml:"keepalive_requests"`
	// UpstreamKeepalive is the idle connections nginx keeps to WireMock.
	UpstreamKeepalive int `yaml:"upstream_keepalive"`
	// UpstreamKeepaliveTimeout is how long an idle upstream connection is kept.
	UpstreamKeepaliveTimeout time.Duration `yaml:"upstream_keepalive_timeout"`
	// KeepaliveHint makes nginx send "Keep-Alive: timeout=N" with N the
	// keepalive_timeout, so a client that honours it closes in time
	// (keepalive_hint; docs/studies.md#idle-race).
	KeepaliveHint bool `yaml:"keepalive_hint"`
}

// WireMockSpec holds WireMock's settings (wiremock).
type WireMockSpec struct {
	// Stubs is the stub list file relative to the profile folder (stubs).
	Stubs string `yaml:"stubs"`
	// ServerDelayMS is the fixed delay, ms, of every stub marked
	// server_delay (the send): the vendor's think time, 18 ms in the case
	// (server_delay_ms).
	ServerDelayMS int `yaml:"server_delay_ms"`
}

// ClientDefaults are what a worker should use with this vendor (client).
type ClientDefaults struct {
	// ResponseTimeout bounds one request, first response byte included.
	ResponseTimeout time.Duration `yaml:"response_timeout"`
	// CorrelationHeader carries the refkey on every send, e.g. "X-Refkey";
	// nginx logs it as the access log's last field.
	CorrelationHeader string `yaml:"correlation_header"`
	// IdempotencyHeader is the header the vendor de-duplicates on; "" when
	// it does not de-duplicate, in which case the worker must send none
	// (Go's net/http replays a POST carrying Idempotency-Key or
	// X-Idempotency-Key; docs/outcomes.md#automatic-replays).
	IdempotencyHeader string `yaml:"idempotency_header"`
}

// TLSVersions returns the profile's TLS versions as crypto/tls constants
// (tls.VersionTLS12, tls.VersionTLS13). Only valid on a validated profile.
func (p *Profile) TLSVersions() (minVersion, maxVersion uint16) {
	return tlsVersions[p.TLS.MinVersion], tlsVersions[p.TLS.MaxVersion]
}

// tlsVersions maps the profile's version names to crypto/tls constants.
var tlsVersions = map[string]uint16{"1.2": 0x0303, "1.3": 0x0304}

// LoadProfile reads dir/profile.yaml and the stub list it names, and
// validates both. Unknown YAML keys are errors (a typo must not silently
// fall back to a default). Relative dirs are tried from the working
// directory, then from the repository root (the nearest parent holding
// go.mod), so DefaultProfileDir works from a package's test too. Errors
// wrap ErrInvalidProfile and list every problem found.
func LoadProfile(dir string) (*Profile, error) {
	abs, err := resolveRepoPath(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidProfile, err)
	}
	raw, err := os.ReadFile(filepath.Join(abs, ProfileFile))
	if err != nil {
		return nil, fmt.Errorf("%w: read profile: %v", ErrInvalidProfile, err)
	}
	p := &Profile{}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(p); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidProfile, filepath.Join(abs, ProfileFile), err)
	}
	p.Dir = abs
	if problems := p.validate(); len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s: %s", ErrInvalidProfile, filepath.Join(abs, ProfileFile), strings.Join(problems, "; "))
	}
	stubs, err := LoadStubs(filepath.Join(abs, p.WireMock.Stubs))
	if err != nil {
		return nil, err
	}
	p.Stubs = stubs
	if p.Reports != nil {
		b, err := json.Marshal(p.Reports)
		if err != nil {
			return nil, fmt.Errorf("%w: reports: %v", ErrInvalidProfile, err)
		}
		p.ReportsJSON = string(b)
	}
	if p.StatusTableJSON, err = loadStatusTable(filepath.Join(abs, StatusTableFile)); err != nil {
		return nil, err
	}
	return p, nil
}

// loadStatusTable reads the YAML status table at path as JSON; a missing
// file is "". Errors wrap ErrInvalidProfile and name the file.
func loadStatusTable(path string) (string, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("%w: read status table: %w", ErrInvalidProfile, err)
	}
	var doc any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrInvalidProfile, path, err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("%w: %s: not a mapping of strings: %w", ErrInvalidProfile, path, err)
	}
	return string(b), nil
}

var (
	profileNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	dnsLabelRE    = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	headerNameRE  = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// validate returns one line per broken rule, each naming its YAML key.
func (p *Profile) validate() []string {
	var probs []string
	bad := func(key, format string, args ...any) {
		probs = append(probs, key+": "+fmt.Sprintf(format, args...))
	}
	if !profileNameRE.MatchString(p.Name) {
		bad("name", "must be lowercase letters, digits and '-', got %q", p.Name)
	}
	if err := validHost(p.Host); err != nil {
		bad("host", "%v", err)
	}
	for key, path := range map[string]string{"api.token_path": p.API.TokenPath, "api.send_path": p.API.SendPath} {
		if !strings.HasPrefix(path, "/") {
			bad(key, "must start with '/', got %q", path)
		}
	}
	if p.API.RefKeyField == "" {
		bad("api.refkey_field", "must not be empty")
	}
	if p.API.SuccessCode == "" {
		bad("api.success_code", "must not be empty")
	}
	if a := p.API.TokenAuth; a != "" && a != TokenAuthBasic && a != TokenAuthForm {
		bad("api.token_auth", "must be %q or %q, got %q", TokenAuthBasic, TokenAuthForm, a)
	}
	minV, okMin := tlsVersions[p.TLS.MinVersion]
	maxV, okMax := tlsVersions[p.TLS.MaxVersion]
	if !okMin {
		bad("tls.min_version", `must be "1.2" or "1.3", got %q`, p.TLS.MinVersion)
	}
	if !okMax {
		bad("tls.max_version", `must be "1.2" or "1.3", got %q`, p.TLS.MaxVersion)
	}
	if c := p.TLS.ClientAuth; c != "" && c != ClientAuthRequired {
		bad("tls.client_auth", `must be "" (none) or %q, got %q`, ClientAuthRequired, c)
	}
	if okMin && okMax && minV > maxV {
		bad("tls", "min_version %s is above max_version %s", p.TLS.MinVersion, p.TLS.MaxVersion)
	}
	if r := p.RateLimit; r.SendsPerSecond < 0 || r.Burst < 0 || r.RetryAfterS < 0 {
		bad("rate_limit", "sends_per_second, burst and retry_after_s must be >= 0, got %d, %d, %d", r.SendsPerSecond, r.Burst, r.RetryAfterS)
	}
	if p.Nginx.Template == "" {
		bad("nginx.template", "must name the nginx.conf template file")
	} else if err := fileInDir(p.Dir, p.Nginx.Template); err != nil {
		bad("nginx.template", "%v", err)
	}
	if p.Nginx.KeepaliveTimeout < 0 {
		bad("nginx.keepalive_timeout", "must be >= 0, got %s", p.Nginx.KeepaliveTimeout)
	}
	if p.Nginx.KeepaliveRequests < 1 {
		bad("nginx.keepalive_requests", "must be >= 1, got %d", p.Nginx.KeepaliveRequests)
	}
	if p.Nginx.UpstreamKeepalive < 1 {
		bad("nginx.upstream_keepalive", "must be >= 1 (else every request opens a new upstream connection), got %d", p.Nginx.UpstreamKeepalive)
	}
	if p.Nginx.UpstreamKeepaliveTimeout <= 0 {
		bad("nginx.upstream_keepalive_timeout", "must be > 0, got %s", p.Nginx.UpstreamKeepaliveTimeout)
	}
	if p.WireMock.Stubs == "" {
		bad("wiremock.stubs", "must name the stub list file")
	} else if err := fileInDir(p.Dir, p.WireMock.Stubs); err != nil {
		bad("wiremock.stubs", "%v", err)
	}
	if p.WireMock.ServerDelayMS < 0 {
		bad("wiremock.server_delay_ms", "must be >= 0, got %d", p.WireMock.ServerDelayMS)
	}
	if p.Client.ResponseTimeout <= 0 {
		bad("client.response_timeout", "must be > 0, got %s", p.Client.ResponseTimeout)
	}
	if !headerNameRE.MatchString(p.Client.CorrelationHeader) {
		bad("client.correlation_header", "must be an HTTP header name, got %q", p.Client.CorrelationHeader)
	}
	if h := p.Client.IdempotencyHeader; h != "" && !headerNameRE.MatchString(h) {
		bad("client.idempotency_header", "must be empty or an HTTP header name, got %q", h)
	}
	if p.Reports != nil {
		probs = append(probs, p.Reports.validate()...)
	}
	return probs
}

// validHost checks a lowercase DNS name with at least two labels.
func validHost(h string) error {
	labels := strings.Split(h, ".")
	if len(h) > 253 || len(labels) < 2 {
		return fmt.Errorf("must be a DNS name with a dot, e.g. api.vendor.test, got %q", h)
	}
	for _, l := range labels {
		if !dnsLabelRE.MatchString(l) {
			return fmt.Errorf("label %q of %q is not a lowercase DNS label", l, h)
		}
	}
	return nil
}

// fileInDir checks that rel is a relative path to a regular file inside dir.
func fileInDir(dir, rel string) error {
	if filepath.IsAbs(rel) || strings.HasPrefix(filepath.Clean(rel), "..") {
		return fmt.Errorf("must be a path inside the profile folder, got %q", rel)
	}
	fi, err := os.Stat(filepath.Join(dir, rel))
	if err != nil {
		return fmt.Errorf("read %q: %v", rel, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%q is not a regular file", rel)
	}
	return nil
}

// resolveRepoPath makes p absolute: as given when it exists from the
// working directory, else joined to the nearest parent holding go.mod.
func resolveRepoPath(p string) (string, error) {
	if filepath.IsAbs(p) {
		return p, nil
	}
	if _, err := os.Stat(p); err == nil {
		return filepath.Abs(p)
	}
	wd, _ := os.Getwd()
	root, ok := FindRepoRoot()
	if !ok {
		return "", fmt.Errorf("resolve %q: not found from %s and no go.mod above it", p, wd)
	}
	cand := filepath.Join(root, p)
	if _, err := os.Stat(cand); err != nil {
		return "", fmt.Errorf("resolve %q: not found from %s nor from the repository root %s", p, wd, root)
	}
	return cand, nil
}
