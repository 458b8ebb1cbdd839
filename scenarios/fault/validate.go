package fault

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/outcome"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

var (
	nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)
	hhmmRE = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)
	// hhmmssRE is a wait step's clock.
	hhmmssRE = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]$`)
	stepKey  = []string{"send", "wait", "check_journal", "toxic_add", "toxic_remove", "proxy_disable",
		"proxy_enable", "nginx", "server_delay_ms", "rotate_token", "restart_worker", "sleep",
		"kill_worker", "stop_worker", "add_worker", "recreate_worker", "restart_broker",
		"pause", "unpause", "partition", "heal", "check_healthz", "kill_node", "stop_node", "start_node"}
)

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
	if c := sc.Client.Concurrency; c < 1 || c > worker.MaxConcurrency {
		bad("client.concurrency", "%d: want 1..%d messages handled at once", c, worker.MaxConcurrency)
	}
	if !slices.Contains(HTTPVersions, sc.Client.HTTPVersion) {
		bad("client.http_version", "%q: want one of %s", sc.Client.HTTPVersion, strings.Join(HTTPVersions, ", "))
	} else if sc.Client.HTTPVersion == "2" && sc.Client.Strategy == vendorapi.PerRequestName {
		bad("client.http_version", "2 with strategy %s: h2 is for a kept connection (use %s)", vendorapi.PerRequestName, vendorapi.PooledName)
	}
	sc.checkStreamReset(bad)
	sc.checkReports(bad)
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
		sc.checkWorkers(bad)
		sc.checkNemesis(bad)
		sc.checkNodes(bad)
		sc.AppliesTo.check(bad)
		sc.Expect.check(bad)
	case KindIdleRace:
		sc.AppliesTo.check(bad)
		if sc.IdleRace == nil {
			bad("idle_race", "kind %s needs an idle_race section", KindIdleRace)
			break
		}
		if len(sc.Steps) > 0 {
			bad("steps", "not used by kind %s (the idle_race section drives it)", KindIdleRace)
		}
		sc.IdleRace.check(bad)
		sc.IdleRace.checkReports(sc.AppliesTo, bad)
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
	if n.RateLimit < 0 || n.RateLimit > 10_000 {
		bad(field+".rate_limit", "%d: want 0..10000 sends/s", n.RateLimit)
	}
	if n.RateLimit > 0 && strings.TrimSpace(n.SendLocation) != "" {
		bad(field+".rate_limit", "not with send_location: both are the send path's location")
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
	add(st.KillWorker != nil, "kill_worker")
	add(st.StopWorker != nil, "stop_worker")
	add(st.AddWorker != nil, "add_worker")
	add(st.RecreateWorker != nil, "recreate_worker")
	add(st.RestartBroker != nil, "restart_broker")
	add(st.Pause != "", "pause")
	add(st.Unpause != "", "unpause")
	add(st.Partition != "", "partition")
	add(st.Heal != "", "heal")
	add(st.CheckHealthz != nil, "check_healthz")
	add(st.KillNode != nil, "kill_node")
	add(st.StopNode != nil, "stop_node")
	add(st.StartNode != nil, "start_node")
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
		switch {
		case w.Clock != "" && (w.Records > 0 || len(w.Outcomes) > 0 || w.Journal > 0 || w.Settled > 0):
			bad(field+".wait.clock", "alone: not with records, settled, outcomes or journal")
		case w.Clock != "" && !hhmmssRE.MatchString(w.Clock):
			bad(field+".wait.clock", "%q: want HH:MM:SS", w.Clock)
		case w.Clock == "" && w.Records <= 0 && len(w.Outcomes) == 0 && w.Journal <= 0 && w.Settled <= 0:
			bad(field+".wait", "set records, settled, outcomes, journal or clock")
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
	default:
		st.checkReplica(field, bad)
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
	if e.Duplicates < 0 || e.Duplicates > 1000 {
		bad("expect.duplicates", "%d: want 0..1000 refkeys sent twice", e.Duplicates)
	}
	if e.Lost < 0 || e.Lost > 1000 {
		bad("expect.lost", "%d: want 0..1000 messages lost", e.Lost)
	}
	if e.RetryAfter < 0 || e.RetryAfter.D() > 5*time.Minute {
		bad("expect.retry_after", "%s: want 0..5m", e.RetryAfter.D())
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
		if !slices.Contains(IdleSettings, s) && s != IdleSettingWorker {
			bad(fmt.Sprintf("idle_race.settings[%d]", i), "%q: want one of %s", s, strings.Join(IdleSettings, ", "))
		}
	}
	for k := range r.Expect {
		if !slices.Contains(r.Settings, k) {
			bad("idle_race.expect."+k, "not one of the settings (%s)", strings.Join(r.Settings, ", "))
		}
	}
}
