package pageload

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// BackendNoiseFloor is the smallest noise band of the backend-bound
// check, as a share of the HTTP/1.1 median: with few loads of a 2 s page
// the interquartile ranges can be narrower than differences nobody would
// call real. Study C's own difference was 10 ms of 2.08 s, 0.5%
// (docs/studies.md, study C).
const BackendNoiseFloor = 0.02

// MaxH1Connections is Chromium's limit of HTTP/1.1 connections per host
// (and per proxy, scheme and port: its socket pool's group), the "6
// connections per host" of study C. A load above it was not one fresh
// browser context's.
const MaxH1Connections = 6

// Check is one judged line of the run.
type Check struct {
	// Name is one of the Check* names.
	Name string `json:"name"`
	Pass bool   `json:"pass"`
	// Line is the verdict line printed and written to summary.md: what
	// was measured against what was asked.
	Line string `json:"line"`
}

// The checks, in the order Judge returns them: the three judged lines of
// the experiment, then the three that say the loads measured what they
// claim.
const (
	CheckH2Faster     = "h2 faster than h1 at the most resources"
	CheckConnections  = "1 connection with h2, several with h1"
	CheckBackendNoise = "backend-bound page within noise"
	CheckComplete     = "every load complete"
	CheckProtocol     = "every load on its protocol"
	CheckFresh        = "fresh connections per load"
)

// Judge judges loads and their cells (Summarize(loads)). maxN is the
// largest image page's resources. The lines:
//   - CheckH2Faster: at maxN, HTTP/2's median page time is below
//     HTTP/1.1's and the middle halves do not overlap (h2's p75 < h1's
//     p25).
//   - CheckConnections: nginx counted exactly 1 connection for every h2
//     load of every page, and 2..MaxH1Connections for every h1 load at
//     maxN.
//   - CheckBackendNoise: on the backend page |h2 median - h1 median| is at
//     most the noise band: the larger of the two interquartile ranges, and
//     at least BackendNoiseFloor of the h1 median.
//   - CheckComplete: no load failed; every image page's load saw its N
//     images in Resource Timing and nginx answered its N+1 requests 200;
//     the backend page's two (the page, the API call) were.
//   - CheckProtocol: every entry of an h1 load used http/1.1 and every
//     nginx line HTTP/1.1; h2 loads h2 and HTTP/2.0.
//   - CheckFresh: no nginx connection served two loads.
//
// A missing cell fails its check with a line that says so.
func Judge(loads []Load, cells []Cell, maxN int) []Check {
	return []Check{
		judgeFaster(cells, maxN),
		judgeConnections(loads, maxN),
		judgeBackend(cells),
		judgeComplete(loads),
		judgeProtocol(loads),
		judgeFresh(loads),
	}
}

func judgeFaster(cells []Cell, maxN int) Check {
	c := Check{Name: CheckH2Faster}
	h1, ok1 := findCell(cells, PageName(maxN), ProtoH1)
	h2, ok2 := findCell(cells, PageName(maxN), ProtoH2)
	if !ok1 || !ok2 || h1.Loads == 0 || h2.Loads == 0 {
		c.Line = fmt.Sprintf("no loads of both protocols at %d resources", maxN)
		return c
	}
	c.Pass = h2.MedianMS < h1.MedianMS && h2.P75MS < h1.P25MS
	c.Line = fmt.Sprintf("at %d resources HTTP/2 median %s ms vs HTTP/1.1 %s ms (%s); h2's p75 %s ms %s h1's p25 %s ms",
		maxN, ms(h2.MedianMS), ms(h1.MedianMS), change(h1.MedianMS, h2.MedianMS),
		ms(h2.P75MS), map[bool]string{true: "<", false: ">="}[h2.P75MS < h1.P25MS], ms(h1.P25MS))
	return c
}

func judgeConnections(loads []Load, maxN int) Check {
	c := Check{Name: CheckConnections, Pass: true}
	var h2n, h1n []int
	for _, l := range loads {
		if l.Error != "" {
			continue
		}
		switch {
		case l.Proto == ProtoH2:
			h2n = append(h2n, l.Server.Connections)
			if l.Server.Connections != 1 {
				c.Pass = false
			}
		case l.Proto == ProtoH1 && l.Page == PageName(maxN):
			h1n = append(h1n, l.Server.Connections)
			if l.Server.Connections < 2 || l.Server.Connections > MaxH1Connections {
				c.Pass = false
			}
		}
	}
	if len(h2n) == 0 || len(h1n) == 0 {
		c.Pass = false
	}
	c.Line = fmt.Sprintf("HTTP/2: %s connection(s) per load over %d loads (want 1 each); HTTP/1.1 at %d resources: %s per load over %d loads (want 2..%d each)",
		spread(h2n), len(h2n), maxN, spread(h1n), len(h1n), MaxH1Connections)
	return c
}

func judgeBackend(cells []Cell) Check {
	c := Check{Name: CheckBackendNoise}
	h1, ok1 := findCell(cells, BackendPage, ProtoH1)
	h2, ok2 := findCell(cells, BackendPage, ProtoH2)
	if !ok1 || !ok2 || h1.Loads == 0 || h2.Loads == 0 {
		c.Line = "no loads of the backend page over both protocols"
		return c
	}
	d := h2.MedianMS - h1.MedianMS
	band := NoiseBand(h1, h2)
	c.Pass = math.Abs(d) <= band
	c.Line = fmt.Sprintf("backend page HTTP/2 median %s ms vs HTTP/1.1 %s ms: difference %+.0f ms (%s), noise band %s ms (the larger IQR, %s / %s ms, at least %.0f%% of the h1 median)",
		ms(h2.MedianMS), ms(h1.MedianMS), d, change(h1.MedianMS, h2.MedianMS), ms(band), ms(h1.IQR()), ms(h2.IQR()), BackendNoiseFloor*100)
	return c
}

// NoiseBand is the backend check's band, ms: the larger interquartile
// range of the two cells, at least BackendNoiseFloor of h1's median.
func NoiseBand(h1, h2 Cell) float64 {
	return math.Max(math.Max(h1.IQR(), h2.IQR()), BackendNoiseFloor*h1.MedianMS)
}

func judgeComplete(loads []Load) Check {
	c := Check{Name: CheckComplete, Pass: len(loads) > 0}
	var bad []string
	for _, l := range loads {
		var why string
		switch {
		case l.Error != "":
			why = "failed: " + l.Error
		case l.Page == BackendPage && l.Server.APIStatus != "200":
			why = fmt.Sprintf("API call status %q", l.Server.APIStatus)
		case l.Page == BackendPage && l.Timing.APIError != "":
			why = "API call failed in the page: " + l.Timing.APIError
		case l.Page != BackendPage && l.Times.Images != l.Resources:
			why = fmt.Sprintf("%d of %d images in Resource Timing", l.Times.Images, l.Resources)
		case l.Server.OK != l.WantRequests():
			why = fmt.Sprintf("nginx answered %d requests 200, want %d", l.Server.OK, l.WantRequests())
		}
		if why != "" {
			bad = append(bad, l.ID+": "+why)
		}
	}
	c.Pass = c.Pass && len(bad) == 0
	c.Line = fmt.Sprintf("%d of %d loads complete", len(loads)-len(bad), len(loads))
	if len(bad) > 0 {
		c.Line += ": " + strings.Join(first(bad, 3), "; ")
	}
	return c
}

func judgeProtocol(loads []Load) Check {
	c := Check{Name: CheckProtocol, Pass: len(loads) > 0}
	var bad []string
	for _, l := range loads {
		if l.Error != "" {
			continue
		}
		browser, server := WantALPN(l.Proto)
		if got := l.Times.OnlyProtocol(); got != browser {
			bad = append(bad, fmt.Sprintf("%s: browser protocols %v, want all %s", l.ID, l.Times.Protocols, browser))
		} else if len(l.Server.Protocols) != 1 || l.Server.Protocols[server] == 0 {
			bad = append(bad, fmt.Sprintf("%s: nginx protocols %v, want all %s", l.ID, l.Server.Protocols, server))
		}
	}
	c.Pass = c.Pass && len(bad) == 0
	c.Line = "every h1 load on http/1.1 and every h2 load on h2, in the browser's Resource Timing and nginx's log"
	if len(bad) > 0 {
		c.Line = fmt.Sprintf("%d load(s) on another protocol: %s", len(bad), strings.Join(first(bad, 3), "; "))
	}
	return c
}

func judgeFresh(loads []Load) Check {
	c := Check{Name: CheckFresh, Pass: len(loads) > 0}
	owner := map[string]string{}
	var bad []string
	for _, l := range loads {
		for _, id := range l.Server.ConnIDs {
			if o, ok := owner[id]; ok && o != l.ID {
				bad = append(bad, fmt.Sprintf("connection %s served %s and %s", id, o, l.ID))
			}
			owner[id] = l.ID
		}
	}
	c.Pass = c.Pass && len(bad) == 0
	c.Line = fmt.Sprintf("%d connections, none shared between two loads", len(owner))
	if len(bad) > 0 {
		c.Line = fmt.Sprintf("%d connection(s) reused across loads: %s", len(bad), strings.Join(first(bad, 3), "; "))
	}
	return c
}

// Passed reports whether every check passed (and there is one).
func Passed(checks []Check) bool {
	return len(checks) > 0 && !slices.ContainsFunc(checks, func(c Check) bool { return !c.Pass })
}

// VerdictLine is "PASS name: line" or "FAIL name: line".
func (c Check) VerdictLine() string {
	v := "FAIL"
	if c.Pass {
		v = "PASS"
	}
	return fmt.Sprintf("%s %s: %s", v, c.Name, c.Line)
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
	}
	return s
}

// spread is "6" or "5-6" of ns ("none" when empty).
func spread(ns []int) string {
	if len(ns) == 0 {
		return "none"
	}
	lo, hi := slices.Min(ns), slices.Max(ns)
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// ms formats a time in ms with a thousands comma and no decimals.
func ms(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	n := int64(math.Round(v))
	s := fmt.Sprint(n)
	if n >= 1000 || n <= -1000 {
		neg := n < 0
		if neg {
			s = s[1:]
		}
		var b strings.Builder
		for i, r := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(r)
		}
		s = b.String()
		if neg {
			s = "-" + s
		}
	}
	return s
}

// change is the relative change from a to b: "-37%".
func change(a, b float64) string {
	if a == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.0f%%", (b-a)/a*100)
}
