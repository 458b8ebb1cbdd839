package audit

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

// Values of AdapterStated.IdleTimeout besides a duration.
const (
	StatedNone    = "none"     // no idle timeout: kept until the server closes it
	StatedNoReuse = "no-reuse" // a new connection per send, none kept idle
)

// AdapterStated is what the team states of its client (the adapter's
// "stated" block): shown on the page beside what the probes measured,
// a disagreement flagged, never judged (the rules judge the measure).
// IdleTimeout is a duration ("90s"), StatedNone or StatedNoReuse; ""
// = nothing stated. Source says where it is stated (a README, the
// library's source at the version used); "" = "the adapter file".
type AdapterStated struct {
	IdleTimeout string `yaml:"idle_timeout" json:"idle_timeout"`
	Source      string `yaml:"source" json:"source,omitempty"`
}

// maxStatedIdle bounds a stated idle timeout (a longer one is a typo or
// means none: say none).
const maxStatedIdle = 24 * time.Hour

// validate returns the block's problems, each naming its field.
func (s AdapterStated) validate() []string {
	if s.IdleTimeout == "" {
		if s.Source != "" {
			return []string{"stated.source: given without stated.idle_timeout"}
		}
		return nil
	}
	if _, err := s.parse(); err != nil {
		return []string{"stated.idle_timeout: " + err.Error()}
	}
	return nil
}

// parse reads IdleTimeout. Errors say what is allowed.
func (s AdapterStated) parse() (Stated, error) {
	src := s.Source
	if src == "" {
		src = "the adapter file"
	} else {
		src = "the adapter file: " + src
	}
	switch v := strings.TrimSpace(s.IdleTimeout); v {
	case StatedNone:
		return Stated{Known: true, Reuse: true, S: math.Inf(1), Source: src}, nil
	case StatedNoReuse:
		return Stated{Known: true, Source: src}, nil
	default:
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > maxStatedIdle {
			return Stated{}, fmt.Errorf("%q: want a duration above 0 and at most 24h (e.g. 90s), %s (kept until the server closes it) or %s (a new connection per send)", s.IdleTimeout, StatedNone, StatedNoReuse)
		}
		return Stated{Known: true, Reuse: true, S: d.Seconds(), Source: src}, nil
	}
}

// StatedIdle returns the adapter's stated idle timeout for probes.json,
// nil when the adapter states none.
func (a *Adapter) StatedIdle() *AdapterStated {
	if a == nil || a.Stated.IdleTimeout == "" {
		return nil
	}
	s := a.Stated
	return &s
}

// statedFor is the stated idle timeout the page shows beside the
// measure: the adapter's (recorded in probes.json) when it states one,
// else what the lab knows of the worker (statedIdle).
func statedFor(in Inputs, r results.Result) Stated {
	if in.Probes != nil && in.Probes.StatedIdle != nil {
		if s, err := in.Probes.StatedIdle.parse(); err == nil {
			return s
		}
	}
	return statedIdle(in.Worker, r)
}
