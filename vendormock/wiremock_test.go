package vendormock

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// templateRE matches one WireMock Handlebars expression.
var templateRE = regexp.MustCompile(`\{\{[^}]*\}\}`)

// testVars are fixed run values, so the rendered stubs are stable.
var testVars = StubVars{ClientID: "lab-client", ClientSecret: "s3cret-for-tests", AccessToken: "token-for-tests", ServerDelayMS: 18}

// renderRules builds the profile's stubs and returns them as WireMock
// mappings (go-wiremock's JSON) without the random ids, keyed by stub name.
func renderRules(t *testing.T, stubs []StubSpec, vars StubVars) (map[string]map[string]any, []byte) {
	t.Helper()
	rules, err := BuildStubRules(stubs, vars)
	if err != nil {
		t.Fatalf("BuildStubRules: %v", err)
	}
	if len(rules) != len(stubs) {
		t.Fatalf("%d rules for %d stubs", len(rules), len(stubs))
	}
	byName := map[string]map[string]any{}
	var all []map[string]any
	for i, r := range rules {
		raw, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		if m["id"] == "" || m["id"] != m["uuid"] {
			t.Errorf("stub %s: id %v uuid %v, want one non-empty id", stubs[i].Name, m["id"], m["uuid"])
		}
		delete(m, "id")
		delete(m, "uuid")
		byName[stubs[i].Name] = m
		all = append(all, map[string]any{"name": stubs[i].Name, "mapping": m})
	}
	out, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return byName, append(out, '\n')
}

// at walks a decoded JSON value by keys.
func at(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func TestStubRulesGolden(t *testing.T) {
	p := loadTestProfile(t)
	byName, out := renderRules(t, p.Stubs, testVars)
	golden(t, "stubs.golden.json", out)

	checks := []struct {
		name      string
		got, want any
	}{
		{"token basic auth user", at(byName["token"], "request", "basicAuthCredentials", "username"), "lab-client"},
		{"token basic auth password", at(byName["token"], "request", "basicAuthCredentials", "password"), "s3cret-for-tests"},
		{"token path", at(byName["token"], "request", "urlPath"), "/v1/token"},
		{"token templated", at(byName["token"], "response", "transformers") != nil, true},
		{"token no delay", at(byName["token"], "response", "delayDistribution"), nil},
		{"send bearer", at(byName["send"], "request", "headers", "Authorization", "and") != nil, true},
		{"send delay type", at(byName["send"], "response", "delayDistribution", "type"), "fixed"},
		{"send delay ms", at(byName["send"], "response", "delayDistribution", "milliseconds"), float64(18)},
		{"send refkey required", at(byName["send"], "request", "bodyPatterns") != nil, true},
		{"send priority", at(byName["send"], "priority"), float64(1)},
		{"unauthorized priority", at(byName["send-unauthorized"], "priority"), float64(10)},
		{"unauthorized status", at(byName["send-unauthorized"], "response", "status"), float64(401)},
		{"unauthorized not templated", at(byName["send-unauthorized"], "response", "transformers"), nil},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	body, _ := at(byName["token"], "response", "body").(string)
	if !strings.Contains(body, `"accesstoken": "token-for-tests"`) || !strings.Contains(body, "{{now offset='1 hours'") {
		t.Errorf("token body %q: want the run's token and a templated expiry", body)
	}
	body, _ = at(byName["send"], "response", "body").(string)
	for _, want := range []string{`"code": "1000"`, "{{jsonPath request.body '$.refkey'}}", "{{randomValue type='UUID'}}"} {
		if !strings.Contains(body, want) {
			t.Errorf("send body %q lacks %q", body, want)
		}
	}
	// Every body is JSON once WireMock's {{...}} are filled in.
	for name, m := range byName {
		b, _ := at(m, "response", "body").(string)
		filled := templateRE.ReplaceAllString(b, "x")
		if !json.Valid([]byte(filled)) {
			t.Errorf("stub %s: body is not JSON with templates filled: %s", name, filled)
		}
	}
}

func TestStubRulesServerDelay(t *testing.T) {
	p := loadTestProfile(t)
	for _, ms := range []int{0, 5, 250} {
		v := testVars
		v.ServerDelayMS = ms
		byName, _ := renderRules(t, p.Stubs, v)
		if got := at(byName["send"], "response", "delayDistribution", "milliseconds"); got != float64(ms) {
			t.Errorf("server delay %d ms: send stub delay %v", ms, got)
		}
	}
	v := testVars
	v.ServerDelayMS = -1
	if _, err := BuildStubRules(p.Stubs, v); !errors.Is(err, ErrInvalidStubs) {
		t.Errorf("negative delay: err %v, want ErrInvalidStubs", err)
	}
}

func TestBuildStubRulesUnknownVariable(t *testing.T) {
	tok := "${acess_token}"
	stubs := []StubSpec{{Name: "typo", Request: RequestSpec{Method: "POST", URLPath: "/x", Bearer: &MatcherSpec{EqualTo: &tok}},
		Response: ResponseSpec{Status: 200, Body: `{"a": "${client_id}", "jsonpath": "$.refkey"}`}}}
	_, err := BuildStubRules(stubs, testVars)
	if !errors.Is(err, ErrInvalidStubs) || !strings.Contains(err.Error(), "${acess_token}") {
		t.Errorf("err = %v, want ErrInvalidStubs naming ${acess_token}", err)
	}
}

func TestExpanderLeavesWireMockSyntax(t *testing.T) {
	x := &expander{vars: map[string]string{"client_id": "abc"}}
	in := `{"id": "${client_id}", "p": "$.refkey", "t": "{{now}}", "re": "^a$1"}`
	want := `{"id": "abc", "p": "$.refkey", "t": "{{now}}", "re": "^a$1"}`
	if got := x.expand(in); got != want || len(x.unknown) != 0 {
		t.Errorf("expand = %s (unknown %v), want %s", got, x.unknown, want)
	}
}

func TestLoadStubsInvalid(t *testing.T) {
	for _, tc := range []struct{ name, yaml, wantIn string }{
		{"empty", "stubs: []\n", "no stubs"},
		{"unknown key", "stubs:\n- name: a\n  request: {method: POST, url_path: /x, urlpath: /y}\n  response: {status: 200}\n", "urlpath"},
		{"two urls", "stubs:\n- name: a\n  request: {method: POST, url_path: /x, url: /y}\n  response: {status: 200}\n", "exactly one of url"},
		{"no url", "stubs:\n- name: a\n  request: {method: POST}\n  response: {status: 200}\n", "exactly one of url"},
		{"bad method", "stubs:\n- name: a\n  request: {method: post, url_path: /x}\n  response: {status: 200}\n", "request.method"},
		{"status", "stubs:\n- name: a\n  request: {method: POST, url_path: /x}\n  response: {status: 42}\n", "response.status"},
		{"two matchers", "stubs:\n- name: a\n  request:\n    method: POST\n    url_path: /x\n    headers: {X-A: {equal_to: a, contains: b}}\n  response: {status: 200}\n", "request.headers.X-A"},
		{"no matcher", "stubs:\n- name: a\n  request:\n    method: POST\n    url_path: /x\n    body: [{}]\n  response: {status: 200}\n", "request.body[0]"},
		{"half basic auth", "stubs:\n- name: a\n  request: {method: POST, url_path: /x, basic_auth: {username: u}}\n  response: {status: 200}\n", "basic_auth"},
		{"both delays", "stubs:\n- name: a\n  request: {method: POST, url_path: /x}\n  response: {status: 200, server_delay: true, fixed_delay_ms: 3}\n", "both set"},
		{"fault", "stubs:\n- name: a\n  request: {method: POST, url_path: /x}\n  response: {status: 200, fault: EXPLODE}\n", "unknown fault"},
		{"missing body file", "stubs:\n- name: a\n  request: {method: POST, url_path: /x}\n  response: {status: 200, body_file: nope.json}\n", "body_file"},
		{"body file outside", "stubs:\n- name: a\n  request: {method: POST, url_path: /x}\n  response: {status: 200, body_file: ../x.json}\n", "inside"},
		{"duplicate names", "stubs:\n- name: a\n  request: {method: POST, url_path: /x}\n  response: {status: 200}\n- name: a\n  request: {method: POST, url_path: /x}\n  response: {status: 200}\n", "used twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "stubs.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadStubs(path)
			if !errors.Is(err, ErrInvalidStubs) || !strings.Contains(err.Error(), tc.wantIn) {
				t.Errorf("err = %v\nwant ErrInvalidStubs mentioning %q", err, tc.wantIn)
			}
		})
	}
}

func TestStubScenarioNeedsName(t *testing.T) {
	s := StubSpec{Name: "x", Request: RequestSpec{Method: "POST", URLPath: "/v3/message"},
		Response: ResponseSpec{Status: 429}, Scenario: &ScenarioSpec{When: "Started", Then: "limited"}}
	err := s.Validate()
	if err == nil || !strings.Contains(err.Error(), "scenario.name") {
		t.Fatalf("Validate() = %v; want an error naming scenario.name", err)
	}
	s.Scenario.Name = "rate-limit"
	if err := s.Validate(); err != nil {
		t.Fatalf("Validate() with a name = %v; want nil", err)
	}
}
