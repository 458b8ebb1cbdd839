package vendormock

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock/journal"

	"github.com/wiremock/go-wiremock"
	"go.yaml.in/yaml/v3"
)

// ErrInvalidStubs is returned (wrapped) when a stub list cannot be read,
// breaks a rule, or uses an unknown ${variable}.
var ErrInvalidStubs = errors.New("invalid stub list")

// StubSpec is one WireMock stub as written in a profile's stub list (see
// profiles/alimtalk/stubs/stubs.yaml for the format). BuildStubRules turns
// it into one go-wiremock StubRule.
type StubSpec struct {
	Name     string       `yaml:"name"`
	Priority int64        `yaml:"priority"` // 1 is tried first; 0 = WireMock's default
	Request  RequestSpec  `yaml:"request"`
	Response ResponseSpec `yaml:"response"`
	// Scenario makes the stub stateful (WireMock scenarios): it matches
	// only while the scenario is in Scenario.When and moves it to
	// Scenario.Then when it answers. Every scenario starts in "Started".
	// For example a 429 answered once, after which the ordinary stub
	// answers the retry. Nil: the stub always matches.
	Scenario *ScenarioSpec `yaml:"scenario"`
}

// ScenarioSpec is a stub's WireMock scenario state machine step.
type ScenarioSpec struct {
	Name string `yaml:"name"` // scenario name
	When string `yaml:"when"` // required state; "" = "Started"
	Then string `yaml:"then"` // new state after the stub answered; "" = unchanged
}

// RequestSpec is a stub's request pattern. Exactly one of URL, URLPath,
// URLPattern, URLPathPattern is set.
type RequestSpec struct {
	Method         string                 `yaml:"method"`
	URL            string                 `yaml:"url"`              // wiremock.URLEqualTo
	URLPath        string                 `yaml:"url_path"`         // wiremock.URLPathEqualTo
	URLPattern     string                 `yaml:"url_pattern"`      // wiremock.URLMatching
	URLPathPattern string                 `yaml:"url_path_pattern"` // wiremock.URLPathMatching
	BasicAuth      *BasicAuthSpec         `yaml:"basic_auth"`       // StubRule.WithBasicAuth
	Bearer         *MatcherSpec           `yaml:"bearer"`           // StubRule.WithBearerToken
	Headers        map[string]MatcherSpec `yaml:"headers"`          // StubRule.WithHeader
	Body           []MatcherSpec          `yaml:"body"`             // StubRule.WithBodyPattern
}

// BasicAuthSpec is the Basic credentials a stub requires.
type BasicAuthSpec struct {
	Username string `yaml:"username"`
	Password string `yaml:"password"`
}

// MatcherSpec is one go-wiremock string matcher; exactly one field is set.
type MatcherSpec struct {
	EqualTo         *string `yaml:"equal_to"`          // wiremock.EqualTo
	Contains        *string `yaml:"contains"`          // wiremock.Contains
	Matches         *string `yaml:"matches"`           // wiremock.Matching (regex)
	DoesNotMatch    *string `yaml:"does_not_match"`    // wiremock.NotMatching
	MatchesJSONPath *string `yaml:"matches_json_path"` // wiremock.MatchingJsonPath
	EqualToJSON     *string `yaml:"equal_to_json"`     // wiremock.EqualToJson
	Absent          bool    `yaml:"absent"`            // wiremock.Absent
}

// ResponseSpec is a stub's response.
type ResponseSpec struct {
	Status  int64             `yaml:"status"`
	Headers map[string]string `yaml:"headers"`
	// Body is the response body; filled from BodyFile by LoadStubs.
	Body string `yaml:"body"`
	// BodyFile is relative to the stub list's folder.
	BodyFile string `yaml:"body_file"`
	// Template turns on WireMock response templating for this stub
	// ("transformers": ["response-template"]).
	Template bool `yaml:"template"`
	// ServerDelay applies the run's server delay (the vendor's think time).
	ServerDelay bool `yaml:"server_delay"`
	// FixedDelayMS is a fixed delay in ms; not with ServerDelay.
	FixedDelayMS *int64 `yaml:"fixed_delay_ms"`
	// Fault is a WireMock fault name, e.g. "CONNECTION_RESET_BY_PEER".
	Fault string `yaml:"fault"`
}

// StubVars are the per-run values substituted for ${client_id},
// ${client_secret} and ${access_token} in stubs and bodies, plus the run's
// server delay in ms for stubs marked server_delay.
type StubVars struct {
	ClientID, ClientSecret, AccessToken string
	ServerDelayMS                       int
}

// LoadStubs reads a stub list file, reads each body_file (relative to the
// list's folder) into Response.Body, and validates every stub. Errors wrap
// ErrInvalidStubs and name the stub and key at fault.
func LoadStubs(path string) ([]StubSpec, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidStubs, err)
	}
	var file struct {
		Stubs []StubSpec `yaml:"stubs"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidStubs, path, err)
	}
	if len(file.Stubs) == 0 {
		return nil, fmt.Errorf("%w: %s: no stubs", ErrInvalidStubs, path)
	}
	var probs []string
	seen := map[string]bool{}
	for i := range file.Stubs {
		s := &file.Stubs[i]
		name := s.Name
		if name == "" {
			name = fmt.Sprintf("#%d", i+1)
			probs = append(probs, fmt.Sprintf("stub %s: name: must not be empty", name))
		} else if seen[name] {
			probs = append(probs, fmt.Sprintf("stub %s: name: used twice", name))
		}
		seen[name] = true
		if s.Response.BodyFile != "" {
			if s.Response.Body != "" {
				probs = append(probs, fmt.Sprintf("stub %s: response: body and body_file both set", name))
			} else if err := fileInDir(filepath.Dir(path), s.Response.BodyFile); err != nil {
				probs = append(probs, fmt.Sprintf("stub %s: response.body_file: %v", name, err))
			} else {
				b, err := os.ReadFile(filepath.Join(filepath.Dir(path), s.Response.BodyFile))
				if err != nil {
					probs = append(probs, fmt.Sprintf("stub %s: response.body_file: %v", name, err))
				}
				s.Response.Body = string(b)
			}
		}
		for _, p := range s.validate() {
			probs = append(probs, fmt.Sprintf("stub %s: %s", name, p))
		}
	}
	if len(probs) > 0 {
		return nil, fmt.Errorf("%w: %s: %s", ErrInvalidStubs, path, strings.Join(probs, "; "))
	}
	return file.Stubs, nil
}

var methodRE = regexp.MustCompile(`^[A-Z]+$`)

// validate returns one line per broken rule, naming the key.
func (s *StubSpec) validate() []string {
	var probs []string
	if s.Scenario != nil && strings.TrimSpace(s.Scenario.Name) == "" {
		probs = append(probs, "scenario.name: required when scenario is set (when/then are WireMock scenario states)")
	}
	r := s.Request
	if !methodRE.MatchString(r.Method) {
		probs = append(probs, fmt.Sprintf("request.method: must be an upper-case HTTP method, got %q", r.Method))
	}
	n := 0
	for _, u := range []string{r.URL, r.URLPath, r.URLPattern, r.URLPathPattern} {
		if u != "" {
			n++
		}
	}
	if n != 1 {
		probs = append(probs, "request: exactly one of url, url_path, url_pattern, url_path_pattern must be set")
	}
	if r.BasicAuth != nil && (r.BasicAuth.Username == "" || r.BasicAuth.Password == "") {
		probs = append(probs, "request.basic_auth: username and password must both be set")
	}
	if r.Bearer != nil {
		if err := r.Bearer.check(); err != nil {
			probs = append(probs, "request.bearer: "+err.Error())
		}
	}
	for h, m := range r.Headers {
		if !headerNameRE.MatchString(h) {
			probs = append(probs, fmt.Sprintf("request.headers: %q is not a header name", h))
		}
		if err := m.check(); err != nil {
			probs = append(probs, fmt.Sprintf("request.headers.%s: %v", h, err))
		}
	}
	for i, m := range r.Body {
		if err := m.check(); err != nil {
			probs = append(probs, fmt.Sprintf("request.body[%d]: %v", i, err))
		}
	}
	w := s.Response
	if w.Status < 100 || w.Status > 599 {
		probs = append(probs, fmt.Sprintf("response.status: must be 100..599, got %d", w.Status))
	}
	if w.ServerDelay && w.FixedDelayMS != nil {
		probs = append(probs, "response: server_delay and fixed_delay_ms both set")
	}
	if w.FixedDelayMS != nil && *w.FixedDelayMS < 0 {
		probs = append(probs, fmt.Sprintf("response.fixed_delay_ms: must be >= 0, got %d", *w.FixedDelayMS))
	}
	switch wiremock.Fault(w.Fault) {
	case "", wiremock.FaultEmptyResponse, wiremock.FaultMalformedResponseChunk,
		wiremock.FaultRandomDataThenClose, wiremock.FaultConnectionResetByPeer:
	default:
		probs = append(probs, fmt.Sprintf("response.fault: unknown fault %q", w.Fault))
	}
	return probs
}

// check makes sure exactly one matcher is set.
func (m MatcherSpec) check() error {
	n := 0
	for _, v := range []*string{m.EqualTo, m.Contains, m.Matches, m.DoesNotMatch, m.MatchesJSONPath, m.EqualToJSON} {
		if v != nil {
			n++
		}
	}
	if m.Absent {
		n++
	}
	if n != 1 {
		return fmt.Errorf("exactly one of equal_to, contains, matches, does_not_match, matches_json_path, equal_to_json, absent must be set (got %d)", n)
	}
	return nil
}

// matcher builds the go-wiremock matcher, expanding run variables.
func (m MatcherSpec) matcher(x *expander) wiremock.BasicParamMatcher {
	switch {
	case m.EqualTo != nil:
		return wiremock.EqualTo(x.expand(*m.EqualTo))
	case m.Contains != nil:
		return wiremock.Contains(x.expand(*m.Contains))
	case m.Matches != nil:
		return wiremock.Matching(x.expand(*m.Matches))
	case m.DoesNotMatch != nil:
		return wiremock.NotMatching(x.expand(*m.DoesNotMatch))
	case m.MatchesJSONPath != nil:
		return wiremock.MatchingJsonPath(x.expand(*m.MatchesJSONPath))
	case m.EqualToJSON != nil:
		return wiremock.EqualToJson(x.expand(*m.EqualToJSON))
	default:
		return wiremock.Absent()
	}
}

// varRE matches a run variable reference: ${name}.
var varRE = regexp.MustCompile(`\$\{([A-Za-z0-9_]*)\}`)

// expander substitutes run variables and remembers unknown ones. It only
// touches ${name}, so WireMock's own syntax ($.refkey, {{...}}) passes.
type expander struct {
	vars    map[string]string
	unknown []string
}

func (x *expander) expand(s string) string {
	return varRE.ReplaceAllStringFunc(s, func(ref string) string {
		name := varRE.FindStringSubmatch(ref)[1]
		v, ok := x.vars[name]
		if !ok {
			x.unknown = append(x.unknown, ref)
			return ref
		}
		return v
	})
}

// templatedResponse adds WireMock's response-template transformer, which
// go-wiremock v1.11.0's Response has no setter for; it goes through the
// library's ResponseInterface, so everything else stays go-wiremock's.
type templatedResponse struct{ wiremock.Response }

// ParseResponse implements wiremock.ResponseInterface.
func (r templatedResponse) ParseResponse() map[string]any {
	m := r.Response.ParseResponse()
	m["transformers"] = []string{"response-template"}
	return m
}

// BuildStubRules turns validated stubs into go-wiremock StubRules with the
// run's variables substituted and the run's server delay (vars.ServerDelayMS,
// ms) on stubs marked server_delay. Errors wrap ErrInvalidStubs (an unknown
// ${variable}, a negative delay).
func BuildStubRules(stubs []StubSpec, vars StubVars) ([]*wiremock.StubRule, error) {
	if vars.ServerDelayMS < 0 {
		return nil, fmt.Errorf("%w: server delay must be >= 0 ms, got %d", ErrInvalidStubs, vars.ServerDelayMS)
	}
	rules := make([]*wiremock.StubRule, 0, len(stubs))
	for _, s := range stubs {
		x := &expander{vars: map[string]string{
			"client_id":     vars.ClientID,
			"client_secret": vars.ClientSecret,
			"access_token":  vars.AccessToken,
		}}
		r := s.Request
		var url wiremock.URLMatcher
		switch {
		case r.URL != "":
			url = wiremock.URLEqualTo(x.expand(r.URL))
		case r.URLPath != "":
			url = wiremock.URLPathEqualTo(x.expand(r.URLPath))
		case r.URLPattern != "":
			url = wiremock.URLMatching(x.expand(r.URLPattern))
		default:
			url = wiremock.URLPathMatching(x.expand(r.URLPathPattern))
		}
		rule := wiremock.NewStubRule(r.Method, url)
		if s.Priority != 0 {
			rule.AtPriority(s.Priority)
		}
		if sc := s.Scenario; sc != nil {
			rule.InScenario(sc.Name).WhenScenarioStateIs(cmp.Or(sc.When, "Started"))
			if sc.Then != "" {
				rule.WillSetStateTo(sc.Then)
			}
		}
		if r.BasicAuth != nil {
			rule.WithBasicAuth(x.expand(r.BasicAuth.Username), x.expand(r.BasicAuth.Password))
		}
		if r.Bearer != nil {
			rule.WithBearerToken(r.Bearer.matcher(x))
		}
		for h, m := range r.Headers {
			rule.WithHeader(h, m.matcher(x))
		}
		for _, m := range r.Body {
			rule.WithBodyPattern(m.matcher(x))
		}

		w := s.Response
		resp := wiremock.NewResponse().WithStatus(w.Status)
		for k, v := range w.Headers {
			resp = resp.WithHeader(k, x.expand(v))
		}
		if w.Body != "" {
			resp = resp.WithBody(x.expand(w.Body))
		}
		switch {
		case w.ServerDelay:
			resp = resp.WithFixedDelay(time.Duration(vars.ServerDelayMS) * time.Millisecond)
		case w.FixedDelayMS != nil:
			resp = resp.WithFixedDelay(time.Duration(*w.FixedDelayMS) * time.Millisecond)
		}
		if w.Fault != "" {
			resp = resp.WithFault(wiremock.Fault(w.Fault))
		}
		if w.Template {
			rule.WillReturnResponse(templatedResponse{resp})
		} else {
			rule.WillReturnResponse(resp)
		}
		if len(x.unknown) > 0 {
			return nil, fmt.Errorf("%w: stub %s: unknown variables %s (known: ${client_id} ${client_secret} ${access_token})",
				ErrInvalidStubs, s.Name, strings.Join(x.unknown, " "))
		}
		rules = append(rules, rule)
	}
	return rules, nil
}

// SetServerDelay re-registers the profile's stubs with a new server delay,
// ms (the fixed delay on stubs marked server_delay), so one stack serves
// runs with different SERVER_DELAY_MS. Errors: ms < 0, WireMock failing.
func (s *Stack) SetServerDelay(ctx context.Context, ms int) error {
	if ms < 0 {
		return fmt.Errorf("set server delay: negative delay %d ms", ms)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("set server delay: %w", err)
	}
	s.ServerDelayMS = ms
	if err := s.registerStubs(); err != nil {
		return fmt.Errorf("set server delay: %w", err)
	}
	return nil
}

// ResetJournal empties WireMock's request journal (DELETE
// /__admin/requests; go-wiremock's Reset would reset the stubs instead).
func (s *Stack) ResetJournal(ctx context.Context) error {
	if s.NoRequestJournal {
		return nil // nothing kept, nothing to clear
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.WireMockURL+"/__admin/requests", nil)
	if err != nil {
		return fmt.Errorf("reset journal: %w", err)
	}
	resp, err := s.adminHTTP.Do(req)
	if err != nil {
		return fmt.Errorf("reset journal: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("reset journal: status %d", resp.StatusCode)
	}
	return nil
}

// JournalEntry is one request WireMock received (package journal's Entry,
// shared with the reconciler).
type JournalEntry = journal.Entry

// Journal returns every request in WireMock's journal, oldest first; the
// refkey comes from the JSON body field named by the profile's
// api.refkey_field. Errors: journal.ErrDisabled, journal.ErrTruncated, an
// unreadable answer.
func (s *Stack) Journal(ctx context.Context) ([]JournalEntry, error) {
	return journal.Read(ctx, s.adminHTTP, s.WireMockURL, s.Profile.API.RefKeyField)
}

// JournalCount counts the requests in WireMock's journal with this method
// and exact URL path (go-wiremock's GetCountRequests).
func (s *Stack) JournalCount(ctx context.Context, method, path string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("count journal: %w", err)
	}
	n, err := s.wm.GetCountRequests(wiremock.NewRequest(method, wiremock.URLPathEqualTo(path)))
	if err != nil {
		return 0, fmt.Errorf("count journal: %w", err)
	}
	return n, nil
}

// WireMock returns the go-wiremock client of the stack's WireMock (host
// URL), for scenarios that add their own stubs (faults, business codes).
func (s *Stack) WireMock() *wiremock.Client { return s.wm }
