package vendormock

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"text/template"
	"time"
)

// Paths inside the nginx container. The official image and the lab's
// offline image both read /etc/nginx/nginx.conf and run
// nginx -g 'daemon off;'.
const (
	nginxConfPath = "/etc/nginx/nginx.conf"
	nginxLabDir   = "/etc/nginx/lab"     // CertFileName, ServerKeyFile (read-only bind mount)
	nginxLogDir   = "/var/log/nginx/lab" // AccessLogFile (bind mount the host reads)
	// AccessLogFile is the access log's file name in the work dir's log
	// folder and in nginxLogDir.
	AccessLogFile = "access.log"
	// ErrorLogFile is nginx's error log (info level) beside it.
	ErrorLogFile = "error.log"
	// ProbePath is answered 204 by nginx itself (not logged, not proxied);
	// SelfCheck and the readiness wait use it.
	ProbePath = "/__lab/probe"
	// wiremockUpstream is WireMock's address on the run's network.
	wiremockUpstream = "wiremock:8080"
)

// NginxConfig is the data a profile's nginx.conf template renders. Times
// are in nginx syntax ("75s", "500ms").
type NginxConfig struct {
	Profile      string // profile name, for the header comment
	TemplateName string // template file name, for the header comment
	ServerName   string // the vendor host
	SSLProtocols string // e.g. "TLSv1.2 TLSv1.3"
	// SessionCache and SessionTickets turn TLS session resumption on; the
	// case had both off.
	SessionCache, SessionTickets bool
	KeepaliveTimeout             string // nginx keepalive_timeout, e.g. "75s"
	KeepaliveRequests            int    // nginx keepalive_requests (client and upstream)
	Upstream                     string // "wiremock:8080"
	UpstreamKeepalive            int    // idle upstream connections kept; 0 = no upstream keep-alive (Options.NoUpstreamKeepalive)
	UpstreamKeepaliveTimeout     string // e.g. "10s"
	CertFile, KeyFile            string // container paths
	AccessLog                    string // container path of the access log
	ErrorLog                     string // container path of the error log (info level)
	LogFormat                    string // LogFormat(profile's correlation header)
	RefKeyVar                    string // e.g. "$http_x_refkey"
	ProbePath                    string // ProbePath
	// KeepaliveHint is the second keepalive_timeout parameter (the
	// "Keep-Alive: timeout=N" header), e.g. "5s"; "" = no hint (the
	// profile's nginx.keepalive_hint).
	KeepaliveHint string
	// TLS is false for SchemeHTTP: nginx listens for plain HTTP.
	TLS bool
	// VerifyClient requires a client certificate issued by ClientCAFile
	// (container path; the run's CA) for SchemeMTLS. A request without
	// one, or with an untrusted one, is answered 421 with a JSON body by
	// nginx itself and never proxied to WireMock.
	VerifyClient bool
	ClientCAFile string
	// HTTP2 offers h2 through ALPN (HTTP_VERSION=2).
	HTTP2 bool
	// RateLimit is the profile's rate_limit.sends_per_second (or
	// Options.RateLimit), 0 = none: nginx limit_req on SendPath for the
	// whole account, answering 429 with Retry-After RetryAfterS and a JSON
	// body (the vendor's code 4290). RateBurst is limit_req's burst
	// (nodelay).
	RateLimit, RateBurst, RetryAfterS int
	// SendPath is the profile's api.send_path.
	SendPath string
}

// NewNginxConfig derives the template data from a validated profile;
// keepaliveTimeout overrides the profile's nginx.keepalive_timeout when > 0.
// The scheme is HTTPS and the HTTP version 1.1 (WithTransport changes them).
func NewNginxConfig(p *Profile, keepaliveTimeout time.Duration) NginxConfig {
	if keepaliveTimeout <= 0 {
		keepaliveTimeout = p.Nginx.KeepaliveTimeout
	}
	var protos []string
	minV, maxV := p.TLSVersions()
	for v := minV; v <= maxV; v++ {
		protos = append(protos, map[uint16]string{0x0303: "TLSv1.2", 0x0304: "TLSv1.3"}[v])
	}
	hint := ""
	if p.Nginx.KeepaliveHint {
		hint = nginxTime(keepaliveTimeout)
	}
	return NginxConfig{
		KeepaliveHint:            hint,
		Profile:                  p.Name,
		TemplateName:             filepath.Base(p.Nginx.Template),
		ServerName:               p.Host,
		SSLProtocols:             strings.Join(protos, " "),
		SessionCache:             p.TLS.SessionCache,
		SessionTickets:           p.TLS.SessionTickets,
		KeepaliveTimeout:         nginxTime(keepaliveTimeout),
		KeepaliveRequests:        p.Nginx.KeepaliveRequests,
		Upstream:                 wiremockUpstream,
		UpstreamKeepalive:        p.Nginx.UpstreamKeepalive,
		UpstreamKeepaliveTimeout: nginxTime(p.Nginx.UpstreamKeepaliveTimeout),
		CertFile:                 nginxLabDir + "/" + CertFileName,
		KeyFile:                  nginxLabDir + "/" + ServerKeyFile,
		AccessLog:                nginxLogDir + "/" + AccessLogFile,
		ErrorLog:                 nginxLogDir + "/" + ErrorLogFile,
		LogFormat:                LogFormat(p.Client.CorrelationHeader),
		RefKeyVar:                headerVar(p.Client.CorrelationHeader),
		ProbePath:                ProbePath,
		TLS:                      true,
		ClientCAFile:             nginxLabDir + "/" + CAFileName,
		RateLimit:                p.RateLimit.SendsPerSecond,
		RateBurst:                p.RateLimit.Burst,
		RetryAfterS:              max(p.RateLimit.RetryAfterS, 1),
		SendPath:                 p.API.SendPath,
	}
}

// RenderNginxConf executes the profile's nginx template (nginx.template in
// the profile folder) with c. Errors: unreadable or invalid template, or a
// field the template names that NginxConfig lacks.
func RenderNginxConf(p *Profile, c NginxConfig) ([]byte, error) {
	path := filepath.Join(p.Dir, p.Nginx.Template)
	t, err := template.New(filepath.Base(path)).Option("missingkey=error").ParseFiles(path)
	if err != nil {
		return nil, fmt.Errorf("parse nginx template: %w", err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, c); err != nil {
		return nil, fmt.Errorf("render nginx template: %w", err)
	}
	return b.Bytes(), nil
}

// nginxTime writes a duration in nginx syntax: whole seconds as "75s",
// anything else as whole milliseconds "1500ms"; 0 as "0".
func nginxTime(d time.Duration) string {
	switch {
	case d <= 0:
		return "0"
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	default:
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
}

// headerVar is nginx's variable for a request header: X-Refkey ->
// $http_x_refkey.
func headerVar(header string) string {
	return "$http_" + strings.ReplaceAll(strings.ToLower(header), "-", "_")
}

// nginxConfig is the stack's template data: the profile's (NewNginxConfig)
// at keepalive_timeout ka on the stack's scheme, h2 offered when h2, with
// the stack's options: no upstream pool under NoUpstreamKeepalive, and the
// Keep-Alive hint when hint, KeepaliveHint or the profile asks for it.
func (s *Stack) nginxConfig(ka time.Duration, h2, hint bool) NginxConfig {
	c := NewNginxConfig(s.Profile, ka).WithTransport(s.Scheme, h2)
	if s.NoUpstreamKeepalive {
		c.UpstreamKeepalive = 0
	}
	if hint || s.KeepaliveHint {
		c.KeepaliveHint = nginxTime(ka)
	}
	return c
}
