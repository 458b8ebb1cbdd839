package fault

import "time"

// IdleRaceSpec is the stale keep-alive race.
type IdleRaceSpec struct {
	KeepaliveTimeout Duration `yaml:"keepalive_timeout"` // nginx keepalive_timeout T (default 2s)
	// KeepaliveHint makes nginx send "Keep-Alive: timeout=T" (study B:
	// with it its Node clients gave up reuse and nothing failed); false,
	// the default, sends none.
	KeepaliveHint bool     `yaml:"keepalive_hint"`
	RTTsMS        []int    `yaml:"rtts_ms"`      // default [10, 150]
	Count         int      `yaml:"count"`        // sends per setting and RTT (default 1000; COUNT overrides)
	Burst         int      `yaml:"burst"`        // sends per burst (default 10)
	Spread        Duration `yaml:"pause_spread"` // pauses uniform in [T-spread, T+spread] (default 500ms)
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
	// Reports turns the vendor's delivery reports on in every lane, and
	// UnknownLeft (required with it) counts the UNKNOWN left over all
	// lanes (idlerace_reports.go).
	Reports     *ReportsRunSpec `yaml:"reports"`
	UnknownLeft *Count          `yaml:"unknown_left"`
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
	case IdleSettingWorker:
		return 0 // the worker's own
	default:
		return GoDefaultIdleConnTimeout
	}
}

// GoDefaultIdleConnTimeout is net/http.DefaultTransport's IdleConnTimeout
// (90 s), the "default" setting of the idle race.
const GoDefaultIdleConnTimeout = 90 * time.Second
