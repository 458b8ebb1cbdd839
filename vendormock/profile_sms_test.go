package vendormock

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// smsProfileDir is the second vendor profile: OAuth2 form token, another
// send API, 429 with Retry-After, a 5 s keep-alive, HTTP/2 offered.
const smsProfileDir = "vendormock/profiles/sms"

func TestLoadSMSProfile(t *testing.T) {
	p, err := LoadProfile(smsProfileDir)
	if err != nil {
		t.Fatal(err)
	}
	if p.API.tokenAuth() != TokenAuthForm || p.API.codeField() != "result_code" || p.API.RefKeyField != "client_ref" {
		t.Errorf("api = %+v; want form token, result_code, client_ref", p.API)
	}
	if p.Nginx.KeepaliveTimeout.Seconds() != 5 {
		t.Errorf("keepalive_timeout = %s, want 5s", p.Nginx.KeepaliveTimeout)
	}
	for _, want := range []string{`"503":"NOT_SENT"`, `"E429":"NOT_SENT"`, `"success_code":"0"`} {
		if !strings.Contains(p.StatusTableJSON, want) {
			t.Errorf("status table %s lacks %s", p.StatusTableJSON, want)
		}
	}
	names := map[string]bool{}
	for _, s := range p.Stubs {
		names[s.Name] = true
	}
	for _, n := range []string{"token", "send", "send-throttled", "send-bad-recipient", "send-unauthorized"} {
		if !names[n] {
			t.Errorf("stub %q missing (have %v)", n, names)
		}
	}
	if _, err := BuildStubRules(p.Stubs, StubVars{ClientID: "id", ClientSecret: "s", AccessToken: "t", ServerDelayMS: 12}); err != nil {
		t.Errorf("stub rules: %v", err)
	}
}

// TestNginxKeepaliveHint: the hint is the second keepalive_timeout
// parameter only when the profile asks for it (the negative control is the
// profile as committed, without it).
func TestNginxKeepaliveHint(t *testing.T) {
	p, err := LoadProfile(smsProfileDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		hint bool
		want string
	}{{false, "keepalive_timeout 5s;"}, {true, "keepalive_timeout 5s 5s;"}} {
		p.Nginx.KeepaliveHint = tc.hint
		conf, err := RenderNginxConf(p, NewNginxConfig(p, 0))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(conf), tc.want) {
			t.Errorf("hint %t: nginx.conf lacks %q", tc.hint, tc.want)
		}
		if !strings.Contains(string(conf), "listen 443 ssl http2 default_server;") {
			t.Errorf("nginx.conf does not offer HTTP/2")
		}
	}
}

func TestProfileTokenAuthInvalid(t *testing.T) {
	src, err := resolveRepoPath(DefaultProfileDir)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, ProfileFile))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(raw), "  success_code: \"1000\"", "  success_code: \"1000\"\n  token_auth: digest", 1)
	if err := os.WriteFile(filepath.Join(dir, ProfileFile), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadProfile(dir)
	if !errors.Is(err, ErrInvalidProfile) || !strings.Contains(err.Error(), `api.token_auth: must be "basic" or "form", got "digest"`) {
		t.Fatalf("LoadProfile = %v; want the token_auth problem named", err)
	}
}
