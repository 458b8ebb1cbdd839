package pageload

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock/pagesite"
)

// The two server blocks a page is loaded from.
const (
	ProtoH1 = "h1" // nginx's port with ALPN http/1.1 only
	ProtoH2 = "h2" // nginx's port with ALPN h2
)

// WantALPN is the Resource Timing nextHopProtocol and nginx's
// $server_protocol a load over proto must show.
func WantALPN(proto string) (browser, server string) {
	if proto == ProtoH2 {
		return "h2", "HTTP/2.0"
	}
	return "http/1.1", "HTTP/1.1"
}

// ServerView is what nginx's access log holds of one load (the lines of
// /run/<load id>/).
type ServerView struct {
	// Connections is the distinct $connection values: the browser's TCP
	// connections for this load (Toxiproxy opens one upstream connection
	// per client connection). ConnIDs lists them.
	Connections int      `json:"connections"`
	ConnIDs     []string `json:"conn_ids"`
	// Requests is the lines; OK those answered 200.
	Requests int `json:"requests"`
	OK       int `json:"ok"`
	// Protocols counts $server_protocol ("HTTP/2.0": 101); TLS counts
	// $ssl_protocol.
	Protocols map[string]int `json:"protocols"`
	TLS       map[string]int `json:"tls"`
	// APIStatus is nginx's status of the API call ("" without one).
	APIStatus string `json:"api_status,omitempty"`
}

// ServerViewOf collects loadID's lines of lines.
func ServerViewOf(lines []pagesite.LogLine, loadID string) ServerView {
	v := ServerView{Protocols: map[string]int{}, TLS: map[string]int{}}
	conns := map[string]bool{}
	for _, l := range lines {
		if l.LoadID() != loadID {
			continue
		}
		v.Requests++
		if l.Status == "200" {
			v.OK++
		}
		conns[l.Conn] = true
		v.Protocols[l.Proto]++
		v.TLS[cmp.Or(l.TLS, "none")]++
		if isAPI(l.URI) {
			v.APIStatus = l.Status
		}
	}
	v.ConnIDs = slices.Sorted(maps.Keys(conns))
	v.Connections = len(v.ConnIDs)
	return v
}

// isAPI reports whether uri is a page's API call: /run/<id>/api/...
func isAPI(uri string) bool {
	rest, ok := strings.CutPrefix(uri, "/run/")
	if !ok {
		return false
	}
	_, path, _ := strings.Cut(rest, "/")
	return strings.HasPrefix(path, "api/")
}

// Load is one page load, written as load-<ID>.json.
type Load struct {
	Provenance *results.Provenance `json:"provenance,omitempty"`
	// ID is the load id in the URL: "r3-p100-h2".
	ID string `json:"id"`
	// Page is PageName(Resources) or BackendPage; Resources is the
	// page's images (0 on the backend page).
	Page      string `json:"page"`
	Resources int    `json:"resources"`
	Proto     string `json:"proto"` // ProtoH1 or ProtoH2
	Run       int    `json:"run"`   // 1..RUNS
	URL       string `json:"url"`
	// Attempts is how many times the page was loaded to get this one (a
	// load that failed is retried twice); Error is the last attempt's
	// error when all failed.
	Attempts int    `json:"attempts"`
	Error    string `json:"error,omitempty"`
	// Times is what the page's own timing says; Server what nginx saw.
	Times  PageTimes  `json:"times"`
	Server ServerView `json:"server"`
	// Timing is the page's Navigation and Resource Timing entries, as
	// TimingScript returned them (ms rounded to 0.1).
	Timing Timing `json:"timing"`
}

// WantRequests is how many requests a complete load makes: the page and
// its images, or the page and its API call.
func (l Load) WantRequests() int {
	if l.Page == BackendPage {
		return 2
	}
	return l.Resources + 1
}

// Key is the cell the load belongs to.
func (l Load) Key() CellKey { return CellKey{Page: l.Page, Resources: l.Resources, Proto: l.Proto} }

// CellKey names a cell: one page over one protocol.
type CellKey struct {
	Page      string `json:"page"`
	Resources int    `json:"resources"`
	Proto     string `json:"proto"`
}

// Backend reports whether the cell is the backend-bound page's.
func (k CellKey) Backend() bool { return k.Page == BackendPage }

// Cell is the loads of one page over one protocol: the spread of the page
// time (PageTimes.CompleteMS: the load event, or the API's answer on the
// backend page) and of nginx's connections per load. Loads that failed
// count in Failed, not in the figures.
type Cell struct {
	CellKey
	Loads  int `json:"loads"`
	Failed int `json:"failed"`
	// Median, P25 and P75 (linear interpolation between the sorted
	// loads), Min and Max of the page time, ms.
	MedianMS float64 `json:"median_ms"`
	P25MS    float64 `json:"p25_ms"`
	P75MS    float64 `json:"p75_ms"`
	MinMS    float64 `json:"min_ms"`
	MaxMS    float64 `json:"max_ms"`
	// ConnMedian, ConnMin and ConnMax are nginx's connections per load.
	ConnMedian float64 `json:"conn_median"`
	ConnMin    int     `json:"conn_min"`
	ConnMax    int     `json:"conn_max"`
	// BrowserConnMedian is the browser's own count (Resource Timing).
	BrowserConnMedian float64 `json:"browser_conn_median"`
}

// IQR is P75MS - P25MS.
func (c Cell) IQR() float64 { return c.P75MS - c.P25MS }

// Summarize groups loads into cells, ordered by page (the image pages by
// resources, then the backend page), HTTP/1.1 before HTTP/2.
func Summarize(loads []Load) []Cell {
	groups := map[CellKey][]Load{}
	for _, l := range loads {
		groups[l.Key()] = append(groups[l.Key()], l)
	}
	keys := slices.SortedFunc(maps.Keys(groups), func(a, b CellKey) int {
		return cmp.Or(cmp.Compare(boolInt(a.Backend()), boolInt(b.Backend())),
			cmp.Compare(a.Resources, b.Resources), cmp.Compare(a.Proto, b.Proto))
	})
	var out []Cell
	for _, k := range keys {
		c := Cell{CellKey: k}
		var ms, conns, bconns []float64
		for _, l := range groups[k] {
			if l.Error != "" {
				c.Failed++
				continue
			}
			ms = append(ms, l.Times.CompleteMS)
			conns = append(conns, float64(l.Server.Connections))
			bconns = append(bconns, float64(l.Times.BrowserConnects))
		}
		c.Loads = len(ms)
		if len(ms) > 0 {
			slices.Sort(ms)
			slices.Sort(conns)
			slices.Sort(bconns)
			c.MedianMS, c.P25MS, c.P75MS = quantile(ms, 0.5), quantile(ms, 0.25), quantile(ms, 0.75)
			c.MinMS, c.MaxMS = ms[0], ms[len(ms)-1]
			c.ConnMedian, c.ConnMin, c.ConnMax = quantile(conns, 0.5), int(conns[0]), int(conns[len(conns)-1])
			c.BrowserConnMedian = quantile(bconns, 0.5)
		}
		out = append(out, c)
	}
	return out
}

// quantile is the q-quantile of sorted data, linear between the two
// nearest ranks (R's type 7): with 5 loads the median is the 3rd, p25 the
// 2nd and p75 the 4th.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (pos-float64(lo))*(sorted[hi]-sorted[lo])
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// findCell returns the cell of (page, proto).
func findCell(cells []Cell, page, proto string) (Cell, bool) {
	i := slices.IndexFunc(cells, func(c Cell) bool { return c.Page == page && c.Proto == proto })
	if i < 0 {
		return Cell{}, false
	}
	return cells[i], true
}

// round1 rounds every time of t to 0.1 ms (for the load files).
func (t Timing) round1() Timing {
	r := func(e Entry) Entry {
		for _, f := range []*float64{&e.Start, &e.ConnectStart, &e.ConnectEnd, &e.SecureStart, &e.RequestStart,
			&e.ResponseStart, &e.ResponseEnd, &e.DOMContentLoadedEnd, &e.LoadEventEnd} {
			*f = math.Round(*f*10) / 10
		}
		return e
	}
	out := Timing{APIError: t.APIError}
	if t.Nav != nil {
		n := r(*t.Nav)
		out.Nav = &n
	}
	for _, e := range t.Resources {
		out.Resources = append(out.Resources, r(e))
	}
	return out
}

// String is "p100 over h2".
func (k CellKey) String() string { return fmt.Sprintf("%s over %s", k.Page, k.Proto) }
