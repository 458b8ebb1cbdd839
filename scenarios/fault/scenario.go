package fault

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// Kinds of scenario.
const (
	KindFault    = "fault"     // steps against one worker, checked against Expect
	KindIdleRace = "idle-race" // the stale keep-alive race, IdleRace section
)

// Tools that produce a fault (Scenario.Tool). Transport failures come from
// Toxiproxy or nginx, never from WireMock faults (nginx would turn those
// into 502s).
var Tools = []string{"toxiproxy", "nginx", "wiremock", "broker", "worker", "clock", "publisher"}

// ToxicTypes are the Toxiproxy v2.5.0 toxics a scenario may add.
var ToxicTypes = []string{"latency", "bandwidth", "slow_close", "timeout", "reset_peer", "slicer", "limit_data"}

// Proxies a step may disable or enable: the vendor path
// (vendormock.ProxyName) and the worker's broker connection (BrokerProxy).
var Proxies = []string{vendormock.ProxyName, BrokerProxy}

// BrokerProxy is the Toxiproxy proxy every fault scenario's worker reaches
// RabbitMQ through, so a step can cut the broker connection.
const BrokerProxy = "broker"

// ErrInvalidScenario is wrapped by every *ScenarioError.
var ErrInvalidScenario = errors.New("invalid scenario")

// ScenarioError is a scenario file that cannot be used: the file, the
// field path (e.g. "steps[2].toxic_add.type") and what is wrong. Load
// returns all problems of one file joined.
type ScenarioError struct {
	File  string // path as given
	Field string // YAML path, "" for the whole file
	Msg   string
}

// Error returns "FILE: FIELD: MSG".
func (e *ScenarioError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Field, e.Msg)
}

// Unwrap returns ErrInvalidScenario.
func (e *ScenarioError) Unwrap() error { return ErrInvalidScenario }

// Duration is a time.Duration written in YAML as a Go duration ("2s",
// "500ms").
type Duration time.Duration

// UnmarshalYAML reads a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (like 2s or 500ms)", n.Line, s)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the Go duration string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// MarshalText writes the Go duration string (JSON).
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a Go duration string (JSON).
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Count is an expected count: exact ("3" or 3), at least (">=1"), or a
// range ("0..2", both ends included).
type Count struct {
	Min, Max int // Max < 0 = no upper bound
}

// Exactly returns the Count n.
func Exactly(n int) Count { return Count{Min: n, Max: n} }

// Match reports whether n is within c.
func (c Count) Match(n int) bool { return n >= c.Min && (c.Max < 0 || n <= c.Max) }

// String writes c as it is written in a scenario file.
func (c Count) String() string {
	switch {
	case c.Max < 0:
		return ">=" + strconv.Itoa(c.Min)
	case c.Min == c.Max:
		return strconv.Itoa(c.Min)
	default:
		return fmt.Sprintf("%d..%d", c.Min, c.Max)
	}
}

// ParseCount reads "3", ">=1" or "0..2".
func ParseCount(s string) (Count, error) {
	s = strings.TrimSpace(s)
	bad := fmt.Errorf("%q is not a count (3, >=1 or 0..2)", s)
	if rest, ok := strings.CutPrefix(s, ">="); ok {
		n, err := strconv.Atoi(strings.TrimSpace(rest))
		if err != nil || n < 0 {
			return Count{}, bad
		}
		return Count{Min: n, Max: -1}, nil
	}
	if lo, hi, ok := strings.Cut(s, ".."); ok {
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b, err2 := strconv.Atoi(strings.TrimSpace(hi))
		if err1 != nil || err2 != nil || a < 0 || b < a {
			return Count{}, bad
		}
		return Count{Min: a, Max: b}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return Count{}, bad
	}
	return Exactly(n), nil
}

// UnmarshalYAML reads a number or a count string.
func (c *Count) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := ParseCount(s)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*c = v
	return nil
}

// MarshalYAML writes the count string.
func (c Count) MarshalYAML() (any, error) { return c.String(), nil }

// MarshalText writes the count string (JSON).
func (c Count) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads a count string (JSON).
func (c *Count) UnmarshalText(b []byte) error {
	v, err := ParseCount(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// Scenario is one file of the catalog (scenarios/catalog/<name>.yaml): a
// named, declarative fault or race run through the real stack. Every
// section but name, description, tool and fault is optional; the
// defaults are listed on each field.
type Scenario struct {
	Name        string `yaml:"name"`        // lower case, digits, '-'; equals the file name without .yaml
	Description string `yaml:"description"` // one line for `./run.sh list`
	Kind        string `yaml:"kind"`        // KindFault (default) or KindIdleRace
	// Tool says which part of the lab produces the fault (Tools).
	Tool string `yaml:"tool"`
	// Fault is what goes wrong and what must follow, in a sentence.
	Fault    string       `yaml:"fault"`
	Vendor   VendorSpec   `yaml:"vendor"`
	Network  NetworkSpec  `yaml:"network"`
	Server   ServerSpec   `yaml:"server"`
	Client   ClientSpec   `yaml:"client"`
	Workload WorkloadSpec `yaml:"workload"`
	// Steps run in order: sends (the worker handles them before the next
	// step unless wait: false), waits, checks, and faults switched on and
	// off. They say when each fault applies.
	Steps    []Step        `yaml:"steps"`
	Expect   Expect        `yaml:"expect"`
	IdleRace *IdleRaceSpec `yaml:"idle_race"`

	// File is the path the scenario was read from.
	File string `yaml:"-"`
}

// VendorSpec names the vendor profile; one stack serves a whole
// invocation, so it must be the run's PROFILE (empty = any).
type VendorSpec struct {
	Profile string `yaml:"profile"` // e.g. "alimtalk" (the profile's name)
}

// NetworkSpec is the vendor path through Toxiproxy at the start of the
// scenario.
type NetworkSpec struct {
	RTTMS  int         `yaml:"rtt_ms"` // round trip added by Toxiproxy, ms (default 3)
	Toxics []ToxicSpec `yaml:"toxics"` // added on the vendor proxy before the first step
}

// ToxicSpec is one Toxiproxy toxic (https://github.com/Shopify/toxiproxy
// README, "Toxics"): its name, type, direction and attributes (whole
// numbers: ms for latency/timeout/delay, bytes for limit_data/slicer).
type ToxicSpec struct {
	Name       string         `yaml:"name"`
	Type       string         `yaml:"type"`     // ToxicTypes
	Stream     string         `yaml:"stream"`   // "upstream" (to nginx) or "downstream" (to the worker); default downstream
	Proxy      string         `yaml:"proxy"`    // Proxies; default the vendor proxy
	Toxicity   *float64       `yaml:"toxicity"` // 0..1, default 1
	Attributes map[string]int `yaml:"attributes"`
}

// ServerSpec is the vendor side: WireMock think time, extra stubs, and the
// nginx config in effect at the start.
type ServerSpec struct {
	// DelayMS is WireMock's fixed delay on a send, ms (default 18).
	DelayMS *int `yaml:"delay_ms"`
	// Nginx is the nginx config at the start (default: the profile's).
	Nginx NginxSpec `yaml:"nginx"`
	// Stubs are extra WireMock stubs in the vendor profile's stub format
	// (vendormock/profiles/alimtalk/stubs/stubs.yaml explains it), for
	// business answers such as a rejection code. Not for transport faults.
	Stubs []vendormock.StubSpec `yaml:"stubs"`
}

// NginxSpec is an nginx config variant (vendormock.NginxVariant).
type NginxSpec struct {
	// KeepaliveTimeout is nginx keepalive_timeout (one parameter, no
	// Keep-Alive hint); default the profile's (or KEEPALIVE_TIMEOUT).
	KeepaliveTimeout Duration `yaml:"keepalive_timeout"`
	// SendLocation are nginx directives for "location = <send path>",
	// e.g. "proxy_pass http://127.0.0.1:9;" (nothing listens: 502).
	SendLocation string `yaml:"send_location"`
}

// ClientSpec is the worker under test: strategy and timeouts (worker
// flags of the same names). Zero values keep the worker's defaults.
type ClientSpec struct {
	Strategy            string   `yaml:"strategy"`              // pooled (default) or per-request
	IdleConnTimeout     Duration `yaml:"idle_conn_timeout"`     // default: keepalive_timeout - RTT - 1s
	ResponseTimeout     Duration `yaml:"response_timeout"`      // default the worker's (10s)
	TLSHandshakeTimeout Duration `yaml:"tls_handshake_timeout"` // default the worker's
	DialTimeout         Duration `yaml:"dial_timeout"`          // default the worker's
	RetryDelay          Duration `yaml:"retry_delay"`           // retry queue TTL, default 2s
	MaxAttempts         int      `yaml:"max_attempts"`          // default 5
	// ClockStart starts the worker's clock at this RFC 3339 time
	// (-clock-start), e.g. "2026-11-30T20:49:54+09:00".
	ClockStart string `yaml:"clock_start"`
}

// WorkloadSpec are the defaults of every send step.
type WorkloadSpec struct {
	Category string `yaml:"category"` // info (default) or ad
	Template string `yaml:"template"` // template_code, default LAB_FAULT_01
	Seed     uint64 `yaml:"seed"`     // seeds the pauses of paced sends (default 1)
}

// Step is one thing the runner does; exactly one field is set.
type Step struct {
	Send          *SendStep    `yaml:"send"`
	Wait          *WaitStep    `yaml:"wait"`
	CheckJournal  *Count       `yaml:"check_journal"` // the journal's sends of this scenario so far
	ToxicAdd      *ToxicSpec   `yaml:"toxic_add"`
	ToxicRemove   string       `yaml:"toxic_remove"`  // a toxic's name (vendor proxy)
	ProxyDisable  string       `yaml:"proxy_disable"` // Proxies
	ProxyEnable   string       `yaml:"proxy_enable"`  // Proxies
	Nginx         *NginxSpec   `yaml:"nginx"`         // reload nginx with this variant ({} = the start config)
	ServerDelayMS *int         `yaml:"server_delay_ms"`
	RotateToken   bool         `yaml:"rotate_token"`   // the vendor refuses the current token (401) from now on
	RestartWorker *RestartStep `yaml:"restart_worker"` // SIGTERM the worker, start it again on the same ledger
	Sleep         Duration     `yaml:"sleep"`
}

// SendStep publishes messages and, by default, waits until the worker
// has handled as many (one record each).
type SendStep struct {
	Count    int    `yaml:"count"`    // valid notifications, >= 0
	Invalid  int    `yaml:"invalid"`  // malformed messages mixed in evenly, >= 0
	Category string `yaml:"category"` // default Workload.Category
	Template string `yaml:"template"` // default Workload.Template
	Pacing   Pacing `yaml:"pacing"`
	// Wait false returns at once after publishing.
	Wait *bool `yaml:"wait"`
}

// Pacing spreads a send step's messages over time. Continuous (default)
// publishes one every Interval (0 = all at once); bursts publishes Burst
// messages, waits until the worker handled them, then pauses for a time
// drawn uniformly from [PauseMin, PauseMax] (seeded by Workload.Seed),
// measured from the end of the burst's last send.
type Pacing struct {
	Mode     string   `yaml:"mode"` // continuous | bursts
	Interval Duration `yaml:"interval"`
	Burst    int      `yaml:"burst"`
	PauseMin Duration `yaml:"pause_min"`
	PauseMax Duration `yaml:"pause_max"`
}

// WaitStep waits until every condition set holds (or Timeout, default
// 60s, fails the scenario).
type WaitStep struct {
	Records  int                     `yaml:"records"`  // records (handled messages) at least
	Outcomes map[outcome.Outcome]int `yaml:"outcomes"` // records of each outcome at least
	Journal  int                     `yaml:"journal"`  // journal sends of this scenario at least
	Timeout  Duration                `yaml:"timeout"`
}

// RestartStep stops the worker with SIGTERM (it finishes the message in
// flight) and starts a new one with the same ledger and records.
type RestartStep struct {
	After Duration `yaml:"after"` // pause between stop and start
}

// Expect is what must be observed after the steps (and Settle). Counts
// are Count strings. Every scenario also needs 0 duplicates, 0 lost and a
// reconciler verdict of OK.
type Expect struct {
	// Outcomes counts where each published message ended (reconciler).
	Outcomes map[outcome.Outcome]Count `yaml:"outcomes"`
	// Records counts the worker's records by outcome (attempts, so a
	// retried message counts once per attempt).
	Records map[outcome.Outcome]Count `yaml:"records"`
	// Journal counts POSTs to the send path of this scenario (every status).
	Journal *Count `yaml:"journal"`
	// JournalByOutcome counts journal sends of the messages that ended in
	// each outcome (e.g. UNKNOWN: 1 = the one unknown send reached the vendor).
	JournalByOutcome map[outcome.Outcome]Count `yaml:"journal_by_outcome"`
	// Settle is how long to wait after the steps before counting the
	// journal: at least the slowest response that could still arrive.
	Settle Duration `yaml:"settle"`
	// WindowCutoff "HH:MM" (the worker's window zone): no record SENT at
	// or after it, none OUTSIDE_SEND_WINDOW before it.
	WindowCutoff string `yaml:"window_cutoff"`
	// Reasons: every INVALID, REJECTED, NOT_SENT and UNKNOWN record
	// carries a reason (error text).
	Reasons bool `yaml:"reasons"`
}

// IdleRaceSpec is the stale keep-alive race (issue 4 §2).
type IdleRaceSpec struct {
	KeepaliveTimeout Duration `yaml:"keepalive_timeout"` // nginx keepalive_timeout T (default 2s)
	RTTsMS           []int    `yaml:"rtts_ms"`           // default [10, 150]
	Count            int      `yaml:"count"`             // sends per setting and RTT (default 1000; COUNT overrides)
	Burst            int      `yaml:"burst"`             // sends per burst (default 10)
	Spread           Duration `yaml:"pause_spread"`      // pauses uniform in [T-spread, T+spread] (default 500ms)
	// PauseMin and PauseMax, when set, replace [T-spread, T+spread]: for
	// example both at T - RTT/2 to aim every pause inside the race window.
	PauseMin      Duration `yaml:"pause_min"`
	PauseMax      Duration `yaml:"pause_max"`
	Seed          uint64   `yaml:"seed"`            // default 1
	Margin        Duration `yaml:"margin"`          // of the T-RTT-margin setting (default 250ms)
	ServerDelayMS *int     `yaml:"server_delay_ms"` // default 18
	// Settings are the client idle timeouts compared, by name: "default"
	// (Go's 90s), "t_plus_1s", "t_minus_half_rtt", "t_minus_rtt_margin".
	Settings []string `yaml:"settings"`
	// Expect: failures (UNKNOWN + NOT_SENT) per setting name, at the full
	// count; duplicates must be 0 everywhere.
	Expect map[string]Count `yaml:"expect"`
}

// IdleSettings are the idle-timeout settings of the idle race, in order.
var IdleSettings = []string{"default", "t_plus_1s", "t_minus_half_rtt", "t_minus_rtt_margin"}

// IdleTimeout returns the client idle timeout of a setting for nginx
// keepalive_timeout t, an RTT in ms and a margin.
func IdleTimeout(setting string, t time.Duration, rttMS int, margin time.Duration) time.Duration {
	rtt := time.Duration(rttMS) * time.Millisecond
	switch setting {
	case "t_plus_1s":
		return t + time.Second
	case "t_minus_half_rtt":
		return t - rtt/2
	case "t_minus_rtt_margin":
		return t - rtt - margin
	default:
		return GoDefaultIdleConnTimeout
	}
}

// GoDefaultIdleConnTimeout is net/http.DefaultTransport's IdleConnTimeout
// (90 s), the "default" setting of the idle race.
const GoDefaultIdleConnTimeout = 90 * time.Second

var (
	nameRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)
	hhmmRE  = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)
	stepKey = []string{"send", "wait", "check_journal", "toxic_add", "toxic_remove", "proxy_disable",
		"proxy_enable", "nginx", "server_delay_ms", "rotate_token", "restart_worker", "sleep"}
)

// Parse reads one scenario from data; file names it in errors and must
// be "<name>.yaml" (its base name is compared with name:). Unknown keys
// are errors (a typo must not pass silently). Errors: *ScenarioError
// values joined, each naming the file and the field.
func Parse(file string, data []byte) (*Scenario, error) {
	var sc Scenario
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&sc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &ScenarioError{File: file, Msg: "empty file"}
		}
		return nil, &ScenarioError{File: file, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	sc.File = file
	sc.applyDefaults()
	if errs := sc.validate(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &sc, nil
}

// Load reads and validates one scenario file.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load scenario: %w", err)
	}
	return Parse(path, data)
}

// LoadCatalog reads every *.yaml file of dir, sorted by name. Errors of
// every file are joined; two files with one name are an error.
func LoadCatalog(dir string) ([]*Scenario, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("load catalog: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("load catalog: no *.yaml file in %s", dir)
	}
	sort.Strings(files)
	var (
		out  []*Scenario
		errs []error
	)
	for _, f := range files {
		sc, err := Load(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, sc)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// Select returns the scenarios named by name: "all" = every one, else
// the one with that name. Errors: an unknown name (the message lists the
// known ones).
func Select(all []*Scenario, name string) ([]*Scenario, error) {
	if name == "all" {
		return all, nil
	}
	for _, sc := range all {
		if sc.Name == name {
			return []*Scenario{sc}, nil
		}
	}
	names := make([]string, len(all))
	for i, sc := range all {
		names[i] = sc.Name
	}
	return nil, fmt.Errorf("unknown scenario %q; known: all, %s", name, strings.Join(names, ", "))
}

func (sc *Scenario) applyDefaults() {
	if sc.Kind == "" {
		sc.Kind = KindFault
	}
	if sc.Network.RTTMS == 0 && sc.Kind == KindFault {
		sc.Network.RTTMS = 3
	}
	if sc.Server.DelayMS == nil {
		d := 18
		sc.Server.DelayMS = &d
	}
	if sc.Client.Strategy == "" {
		sc.Client.Strategy = vendorapi.PooledName
	}
	if sc.Client.RetryDelay == 0 {
		sc.Client.RetryDelay = Duration(2 * time.Second)
	}
	if sc.Client.MaxAttempts == 0 {
		sc.Client.MaxAttempts = 5
	}
	if sc.Workload.Category == "" {
		sc.Workload.Category = string(message.Info)
	}
	if sc.Workload.Template == "" {
		sc.Workload.Template = "LAB_FAULT_01"
	}
	if sc.Workload.Seed == 0 {
		sc.Workload.Seed = 1
	}
	for i := range sc.Network.Toxics {
		sc.Network.Toxics[i].defaults()
	}
	for _, st := range sc.Steps {
		if st.ToxicAdd != nil {
			st.ToxicAdd.defaults()
		}
		if st.Send != nil && st.Send.Pacing.Mode == "" {
			st.Send.Pacing.Mode = "continuous"
		}
	}
	if r := sc.IdleRace; r != nil {
		if r.KeepaliveTimeout == 0 {
			r.KeepaliveTimeout = Duration(2 * time.Second)
		}
		if len(r.RTTsMS) == 0 {
			r.RTTsMS = []int{10, 150}
		}
		if r.Count == 0 {
			r.Count = 1000
		}
		if r.Burst == 0 {
			r.Burst = 10
		}
		if r.Spread == 0 {
			r.Spread = Duration(500 * time.Millisecond)
		}
		if r.PauseMin == 0 && r.PauseMax == 0 {
			r.PauseMin, r.PauseMax = r.KeepaliveTimeout-r.Spread, r.KeepaliveTimeout+r.Spread
		}
		if r.Seed == 0 {
			r.Seed = 1
		}
		if r.Margin == 0 {
			r.Margin = Duration(250 * time.Millisecond)
		}
		if r.ServerDelayMS == nil {
			d := 18
			r.ServerDelayMS = &d
		}
		if len(r.Settings) == 0 {
			r.Settings = slices.Clone(IdleSettings)
		}
	}
}

func (t *ToxicSpec) defaults() {
	if t.Stream == "" {
		t.Stream = "downstream"
	}
	if t.Proxy == "" {
		t.Proxy = vendormock.ProxyName
	}
}

// validate returns every problem, each a *ScenarioError.
func (sc *Scenario) validate() []error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ScenarioError{File: sc.File, Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if !nameRE.MatchString(sc.Name) {
		bad("name", "%q: want 1-40 of a-z, 0-9, '-', starting with a letter or digit", sc.Name)
	} else if base := strings.TrimSuffix(filepath.Base(sc.File), filepath.Ext(sc.File)); base != sc.Name {
		bad("name", "%q differs from the file name %q (one file per scenario, named after it)", sc.Name, base)
	}
	if strings.TrimSpace(sc.Description) == "" || strings.Contains(strings.TrimSpace(sc.Description), "\n") {
		bad("description", "want one non-empty line (./run.sh list prints it)")
	}
	if !slices.Contains(Tools, sc.Tool) {
		bad("tool", "%q: want one of %s (which part of the lab produces the fault)", sc.Tool, strings.Join(Tools, ", "))
	}
	if strings.TrimSpace(sc.Fault) == "" {
		bad("fault", "say what goes wrong and what must follow")
	}
	if sc.Network.RTTMS < 0 || sc.Network.RTTMS > 1000 {
		bad("network.rtt_ms", "%d: want 0..1000", sc.Network.RTTMS)
	}
	for i, t := range sc.Network.Toxics {
		t.check(fmt.Sprintf("network.toxics[%d]", i), bad)
	}
	if d := *sc.Server.DelayMS; d < 0 || d > 10000 {
		bad("server.delay_ms", "%d: want 0..10000", d)
	}
	sc.Server.Nginx.check("server.nginx", bad)
	for i, stub := range sc.Server.Stubs {
		if err := stub.Validate(); err != nil {
			bad(fmt.Sprintf("server.stubs[%d]", i), "%v", err)
		}
	}
	if len(sc.Server.Stubs) > 0 {
		if _, err := vendormock.BuildStubRules(sc.Server.Stubs, vendormock.StubVars{ClientID: "x", ClientSecret: "x", AccessToken: "x"}); err != nil {
			bad("server.stubs", "%v", err)
		}
	}
	if !slices.Contains([]string{vendorapi.PooledName, vendorapi.PerRequestName}, sc.Client.Strategy) {
		bad("client.strategy", "%q: want %s or %s", sc.Client.Strategy, vendorapi.PooledName, vendorapi.PerRequestName)
	}
	for field, d := range map[string]Duration{"client.idle_conn_timeout": sc.Client.IdleConnTimeout, "client.response_timeout": sc.Client.ResponseTimeout,
		"client.tls_handshake_timeout": sc.Client.TLSHandshakeTimeout, "client.dial_timeout": sc.Client.DialTimeout, "client.retry_delay": sc.Client.RetryDelay} {
		if d < 0 {
			bad(field, "negative duration %s", d.D())
		}
	}
	if sc.Client.MaxAttempts < 1 || sc.Client.MaxAttempts > 100 {
		bad("client.max_attempts", "%d: want 1..100", sc.Client.MaxAttempts)
	}
	if sc.Client.ClockStart != "" {
		if _, err := time.Parse(time.RFC3339, sc.Client.ClockStart); err != nil {
			bad("client.clock_start", "%q: want RFC 3339, like 2026-11-30T20:49:54+09:00", sc.Client.ClockStart)
		}
	}
	checkCategory := func(field, c string) {
		if c != "" && c != string(message.Info) && c != string(message.Ad) {
			bad(field, "%q: want info or ad", c)
		}
	}
	checkTemplate := func(field, t string) {
		if t != "" && !regexp.MustCompile(message.TemplateCodePattern).MatchString(t) {
			bad(field, "%q: want %s", t, message.TemplateCodePattern)
		}
	}
	checkCategory("workload.category", sc.Workload.Category)
	checkTemplate("workload.template", sc.Workload.Template)

	switch sc.Kind {
	case KindFault:
		if sc.IdleRace != nil {
			bad("idle_race", "only for kind: %s", KindIdleRace)
		}
		if len(sc.Steps) == 0 {
			bad("steps", "a fault scenario needs at least one step")
		}
		sends := 0
		for i, st := range sc.Steps {
			sends += st.check(fmt.Sprintf("steps[%d]", i), bad, checkCategory, checkTemplate)
		}
		if len(sc.Steps) > 0 && sends == 0 {
			bad("steps", "no send step: nothing would be published")
		}
		sc.Expect.check(bad)
	case KindIdleRace:
		if sc.IdleRace == nil {
			bad("idle_race", "kind %s needs an idle_race section", KindIdleRace)
			break
		}
		if len(sc.Steps) > 0 {
			bad("steps", "not used by kind %s (the idle_race section drives it)", KindIdleRace)
		}
		sc.IdleRace.check(bad)
	default:
		bad("kind", "%q: want %s or %s", sc.Kind, KindFault, KindIdleRace)
	}
	return errs
}

func (t ToxicSpec) check(field string, bad func(string, string, ...any)) {
	if !nameRE.MatchString(strings.ReplaceAll(t.Name, "_", "-")) {
		bad(field+".name", "%q: want 1-40 of a-z, 0-9, '-', '_'", t.Name)
	}
	if t.Name == vendormock.ToxicLatencyDown || t.Name == vendormock.ToxicLatencyUp {
		bad(field+".name", "%q is the RTT's toxic (network.rtt_ms sets it)", t.Name)
	}
	if !slices.Contains(ToxicTypes, t.Type) {
		bad(field+".type", "%q: want one of %s", t.Type, strings.Join(ToxicTypes, ", "))
	}
	if t.Stream != "upstream" && t.Stream != "downstream" {
		bad(field+".stream", "%q: want upstream or downstream", t.Stream)
	}
	if !slices.Contains(Proxies, t.Proxy) {
		bad(field+".proxy", "%q: want one of %s", t.Proxy, strings.Join(Proxies, ", "))
	}
	if t.Toxicity != nil && (*t.Toxicity < 0 || *t.Toxicity > 1) {
		bad(field+".toxicity", "%g: want 0..1", *t.Toxicity)
	}
	for k, v := range t.Attributes {
		if v < 0 {
			bad(field+".attributes."+k, "%d: want >= 0", v)
		}
	}
}

func (n NginxSpec) check(field string, bad func(string, string, ...any)) {
	if n.KeepaliveTimeout != 0 && (n.KeepaliveTimeout.D() < time.Second || n.KeepaliveTimeout.D() > time.Hour) {
		bad(field+".keepalive_timeout", "%s: want 1s..1h", n.KeepaliveTimeout.D())
	}
	if strings.ContainsAny(n.SendLocation, "{}") {
		bad(field+".send_location", "directives only, no blocks ('{' or '}')")
	}
	for i, l := range strings.Split(strings.TrimSpace(n.SendLocation), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasSuffix(l, ";") && !strings.HasPrefix(l, "#") {
			bad(fmt.Sprintf("%s.send_location line %d", field, i+1), "%q: an nginx directive ends with ';'", l)
		}
	}
}

// check validates one step and returns how many messages it publishes.
func (st Step) check(field string, bad func(string, string, ...any), cat, tmpl func(string, string)) int {
	set := []string{}
	add := func(ok bool, k string) {
		if ok {
			set = append(set, k)
		}
	}
	add(st.Send != nil, "send")
	add(st.Wait != nil, "wait")
	add(st.CheckJournal != nil, "check_journal")
	add(st.ToxicAdd != nil, "toxic_add")
	add(st.ToxicRemove != "", "toxic_remove")
	add(st.ProxyDisable != "", "proxy_disable")
	add(st.ProxyEnable != "", "proxy_enable")
	add(st.Nginx != nil, "nginx")
	add(st.ServerDelayMS != nil, "server_delay_ms")
	add(st.RotateToken, "rotate_token")
	add(st.RestartWorker != nil, "restart_worker")
	add(st.Sleep != 0, "sleep")
	if len(set) != 1 {
		bad(field, "want exactly one of %s; got %d (%s)", strings.Join(stepKey, ", "), len(set), strings.Join(set, ", "))
		return 0
	}
	switch {
	case st.Send != nil:
		s := st.Send
		if s.Count < 0 || s.Invalid < 0 || s.Count+s.Invalid == 0 || s.Count+s.Invalid > 100000 {
			bad(field+".send", "count %d + invalid %d: want 1..100000 messages", s.Count, s.Invalid)
		}
		cat(field+".send.category", s.Category)
		tmpl(field+".send.template", s.Template)
		p := s.Pacing
		switch p.Mode {
		case "continuous":
			if p.Interval < 0 {
				bad(field+".send.pacing.interval", "negative")
			}
		case "bursts":
			if p.Burst < 1 {
				bad(field+".send.pacing.burst", "%d: want >= 1", p.Burst)
			}
			if p.PauseMin < 0 || p.PauseMax < p.PauseMin {
				bad(field+".send.pacing.pause_min", "want 0 <= pause_min <= pause_max")
			}
			if s.Wait != nil && !*s.Wait {
				bad(field+".send.wait", "bursts always wait for each burst")
			}
		default:
			bad(field+".send.pacing.mode", "%q: want continuous or bursts", p.Mode)
		}
		return s.Count + s.Invalid
	case st.Wait != nil:
		w := st.Wait
		if w.Records <= 0 && len(w.Outcomes) == 0 && w.Journal <= 0 {
			bad(field+".wait", "set records, outcomes or journal")
		}
		for k := range w.Outcomes {
			if _, err := outcome.Parse(string(k)); err != nil {
				bad(field+".wait.outcomes."+string(k), "unknown outcome; want one of %s", outcome.Names(outcome.All))
			}
		}
		if w.Timeout < 0 {
			bad(field+".wait.timeout", "negative")
		}
	case st.ToxicAdd != nil:
		st.ToxicAdd.check(field+".toxic_add", bad)
	case st.ProxyDisable != "":
		if !slices.Contains(Proxies, st.ProxyDisable) {
			bad(field+".proxy_disable", "%q: want one of %s", st.ProxyDisable, strings.Join(Proxies, ", "))
		}
	case st.ProxyEnable != "":
		if !slices.Contains(Proxies, st.ProxyEnable) {
			bad(field+".proxy_enable", "%q: want one of %s", st.ProxyEnable, strings.Join(Proxies, ", "))
		}
	case st.Nginx != nil:
		st.Nginx.check(field+".nginx", bad)
	case st.ServerDelayMS != nil:
		if *st.ServerDelayMS < 0 || *st.ServerDelayMS > 10000 {
			bad(field+".server_delay_ms", "%d: want 0..10000", *st.ServerDelayMS)
		}
	case st.Sleep != 0:
		if st.Sleep < 0 || st.Sleep.D() > 5*time.Minute {
			bad(field+".sleep", "%s: want 0..5m", st.Sleep.D())
		}
	case st.RestartWorker != nil:
		if st.RestartWorker.After < 0 {
			bad(field+".restart_worker.after", "negative")
		}
	}
	return 0
}

func (e Expect) check(bad func(string, string, ...any)) {
	// Where a message ends is any reconciled name; a record's outcome is
	// one the worker writes.
	for name, m := range map[string]map[outcome.Outcome]Count{"expect.outcomes": e.Outcomes, "expect.journal_by_outcome": e.JournalByOutcome} {
		for k := range m {
			if !slices.Contains(outcome.Reconciled, k) {
				bad(name+"."+string(k), "unknown outcome; want one of %s", outcome.Names(outcome.Reconciled))
			}
		}
	}
	for k := range e.Records {
		if _, err := outcome.Parse(string(k)); err != nil {
			bad("expect.records."+string(k), "unknown outcome; want one of %s", outcome.Names(outcome.All))
		}
	}
	if len(e.Outcomes) == 0 {
		bad("expect.outcomes", "a fault scenario must say where its messages end")
	}
	if e.Settle < 0 || e.Settle.D() > 5*time.Minute {
		bad("expect.settle", "%s: want 0..5m", e.Settle.D())
	}
	if e.WindowCutoff != "" && !hhmmRE.MatchString(e.WindowCutoff) {
		bad("expect.window_cutoff", "%q: want HH:MM", e.WindowCutoff)
	}
}

func (r *IdleRaceSpec) check(bad func(string, string, ...any)) {
	t := r.KeepaliveTimeout.D()
	if t < time.Second || t > time.Minute {
		bad("idle_race.keepalive_timeout", "%s: want 1s..1m", t)
	}
	for i, rtt := range r.RTTsMS {
		if rtt < 0 || rtt > 1000 {
			bad(fmt.Sprintf("idle_race.rtts_ms[%d]", i), "%d: want 0..1000", rtt)
		}
		if time.Duration(rtt)*time.Millisecond+r.Margin.D() >= t {
			bad(fmt.Sprintf("idle_race.rtts_ms[%d]", i), "%d ms + margin %s leaves no idle time below keepalive_timeout %s", rtt, r.Margin.D(), t)
		}
	}
	if r.Count < 1 {
		bad("idle_race.count", "%d: want >= 1", r.Count)
	}
	if r.Burst < 1 {
		bad("idle_race.burst", "%d: want >= 1", r.Burst)
	}
	if r.Spread < 0 || r.Spread.D() >= t {
		bad("idle_race.pause_spread", "%s: want 0 <= spread < keepalive_timeout", r.Spread.D())
	}
	if (r.PauseMin != 0) != (r.PauseMax != 0) || r.PauseMin < 0 || r.PauseMax < r.PauseMin {
		bad("idle_race.pause_min", "set both pause_min and pause_max, 0 < pause_min <= pause_max")
	}
	for i, s := range r.Settings {
		if !slices.Contains(IdleSettings, s) {
			bad(fmt.Sprintf("idle_race.settings[%d]", i), "%q: want one of %s", s, strings.Join(IdleSettings, ", "))
		}
	}
	for k := range r.Expect {
		if !slices.Contains(r.Settings, k) {
			bad("idle_race.expect."+k, "not one of the settings (%s)", strings.Join(r.Settings, ", "))
		}
	}
}

// Published counts the messages the scenario's steps publish.
func (sc *Scenario) Published() int {
	n := 0
	for _, st := range sc.Steps {
		if st.Send != nil {
			n += st.Send.Count + st.Send.Invalid
		}
	}
	return n
}
