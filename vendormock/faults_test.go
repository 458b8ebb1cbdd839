package vendormock

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestNginxConfVariants(t *testing.T) {
	p, err := LoadProfile(DefaultProfileDir)
	if err != nil {
		t.Fatal(err)
	}
	s := &Stack{Profile: p, KeepaliveTimeout: 75 * time.Second}
	kaRE := regexp.MustCompile(`(?m)^\s*keepalive_timeout\s+([^;]*);`)
	tests := []struct {
		name      string
		v         NginxVariant
		wantKA    string
		wantSend  bool
		wantCount int // "location " blocks
	}{
		{"zero value is the stack's", NginxVariant{}, "75s", false, 2},
		{"idle race keepalive", NginxVariant{KeepaliveTimeout: 2 * time.Second}, "2s", false, 2},
		{"502 send location", NginxVariant{SendLocation: "proxy_pass http://127.0.0.1:9;"}, "75s", true, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf, err := s.NginxConf(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			c := string(conf)
			// The server block's client keepalive_timeout has one parameter:
			// no "Keep-Alive: timeout=N" hint reaches the client.
			var server string
			for _, m := range kaRE.FindAllStringSubmatch(c, -1) {
				server = m[1] // the last one is the server block's (the first is the upstream's)
			}
			if server != tt.wantKA {
				t.Errorf("keepalive_timeout %q; want %q (one parameter)", server, tt.wantKA)
			}
			hasSend := strings.Contains(c, "location = "+p.API.SendPath+" {\n            proxy_pass http://127.0.0.1:9;")
			if hasSend != tt.wantSend {
				t.Errorf("send location present %v; want %v", hasSend, tt.wantSend)
			}
			if n := strings.Count(c, "location "); n != tt.wantCount {
				t.Errorf("%d location blocks; want %d", n, tt.wantCount)
			}
			if strings.Count(c, "{") != strings.Count(c, "}") {
				t.Error("unbalanced braces")
			}
		})
	}
}

// TestNginxConfVariantRateLimit: a variant's rate limit renders the
// account's limit_req zone and the send location under it (429 with
// Retry-After); the zero variant of a stack without one has neither, and
// a rate limit beside a send location is refused.
func TestNginxConfVariantRateLimit(t *testing.T) {
	p, err := LoadProfile(DefaultProfileDir)
	if err != nil {
		t.Fatal(err)
	}
	s := &Stack{Profile: p, KeepaliveTimeout: 75 * time.Second}
	plain, err := s.NginxConf(NginxVariant{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(plain), "limit_req") {
		t.Fatal("the zero variant of a stack without a rate limit has limit_req")
	}
	conf, err := s.NginxConf(NginxVariant{RateLimit: 30})
	if err != nil {
		t.Fatal(err)
	}
	c := string(conf)
	for _, want := range []string{"limit_req_zone $server_name zone=account_sends:1m rate=30r/s;", "limit_req_status 429;",
		"location = " + p.API.SendPath + " {\n            limit_req zone=account_sends", "add_header Retry-After"} {
		if !strings.Contains(c, want) {
			t.Errorf("rate-limited config lacks %q", want)
		}
	}
	if _, err := s.NginxConf(NginxVariant{RateLimit: 30, SendLocation: "return 502;"}); !errors.Is(err, ErrNginxConfig) {
		t.Errorf("rate limit and send location: %v, want ErrNginxConfig", err)
	}
}

func TestStubSpecValidate(t *testing.T) {
	good := StubSpec{Name: "ok", Request: RequestSpec{Method: "POST", URLPath: "/v3/message"}, Response: ResponseSpec{Status: 200}}
	if err := good.Validate(); err != nil {
		t.Errorf("valid stub: %v", err)
	}
	bad := StubSpec{Name: "bad", Request: RequestSpec{Method: "post"}, Response: ResponseSpec{Status: 200}}
	err := bad.Validate()
	if !errors.Is(err, ErrInvalidStubs) || !strings.Contains(err.Error(), `stub "bad"`) || !strings.Contains(err.Error(), "request.method") {
		t.Errorf("Validate = %v; want ErrInvalidStubs naming the stub and request.method", err)
	}
}

// A reload keeps the stack's transport and can offer h2 for one scenario.
func TestNginxConfVariantTransport(t *testing.T) {
	p, err := LoadProfile(DefaultProfileDir)
	if err != nil {
		t.Fatal(err)
	}
	listen := regexp.MustCompile(`(?m)^\s*listen 443[^;]*;`)
	for _, tc := range []struct {
		name   string
		s      *Stack
		v      NginxVariant
		listen string
	}{
		{"https, h1 only", &Stack{Profile: p, KeepaliveTimeout: time.Minute, Scheme: SchemeHTTPS}, NginxVariant{}, "listen 443 ssl default_server;"},
		{"https, variant offers h2", &Stack{Profile: p, KeepaliveTimeout: time.Minute, Scheme: SchemeHTTPS}, NginxVariant{HTTP2: true}, "listen 443 ssl http2 default_server;"},
		{"stack started with h2 keeps it", &Stack{Profile: p, KeepaliveTimeout: time.Minute, Scheme: SchemeHTTPS, HTTP2: true}, NginxVariant{}, "listen 443 ssl http2 default_server;"},
		{"plain http stays plain", &Stack{Profile: p, KeepaliveTimeout: time.Minute, Scheme: SchemeHTTP}, NginxVariant{HTTP2: true}, "listen 443 default_server;"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf, err := tc.s.NginxConf(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(listen.FindString(string(conf))); got != tc.listen {
				t.Errorf("listen %q; want %q", got, tc.listen)
			}
		})
	}
}
