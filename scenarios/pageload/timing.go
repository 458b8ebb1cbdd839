package pageload

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// TimingScript is evaluated in the page after its load: it returns, as a
// JSON string, the page's own Navigation Timing entry and every Resource
// Timing entry (W3C Navigation Timing Level 2, Resource Timing Level 2),
// times in ms from the navigation's start, and the backend page's API
// error if its fetch failed.
const TimingScript = `(() => {
  const r = e => ({name: e.name, type: e.initiatorType || e.entryType, start: e.startTime,
    connect_start: e.connectStart, connect_end: e.connectEnd, secure_start: e.secureConnectionStart,
    request_start: e.requestStart, response_start: e.responseStart, response_end: e.responseEnd,
    protocol: e.nextHopProtocol, transfer_size: e.transferSize, status: e.responseStatus || 0});
  const n = performance.getEntriesByType("navigation")[0];
  const nav = n ? Object.assign(r(n), {dom_content_loaded_end: n.domContentLoadedEventEnd, load_event_end: n.loadEventEnd}) : null;
  return JSON.stringify({nav: nav, resources: performance.getEntriesByType("resource").map(r),
    api_error: window.__labAPIError || ""});
})()`

// ReadyScript is true once the page's load event has ended and, on the
// backend page, its API call has been answered (or failed).
const ReadyScript = `(() => { const n = performance.getEntriesByType("navigation")[0];
  return !!n && n.loadEventEnd > 0 && window.__labAPIDone !== false; })()`

// Entry is one Navigation or Resource Timing entry, ms from the
// navigation's start (its startTime, 0). ConnectEnd > ConnectStart means
// the request opened a connection; Protocol is the ALPN protocol used
// ("h2", "http/1.1").
type Entry struct {
	Name          string  `json:"name"`
	Type          string  `json:"type"` // initiatorType: "img", "fetch"; "navigation"
	Start         float64 `json:"start"`
	ConnectStart  float64 `json:"connect_start"`
	ConnectEnd    float64 `json:"connect_end"`
	SecureStart   float64 `json:"secure_start,omitempty"`
	RequestStart  float64 `json:"request_start"`
	ResponseStart float64 `json:"response_start"`
	ResponseEnd   float64 `json:"response_end"`
	Protocol      string  `json:"protocol"`
	TransferSize  float64 `json:"transfer_size"`
	Status        int     `json:"status"` // responseStatus (Resource Timing Level 3), 0 when unknown
	// DOMContentLoadedEnd and LoadEventEnd are the navigation entry's.
	DOMContentLoadedEnd float64 `json:"dom_content_loaded_end,omitempty"`
	LoadEventEnd        float64 `json:"load_event_end,omitempty"`
}

// Opened reports whether the entry's request opened a connection.
func (e Entry) Opened() bool { return e.ConnectEnd > e.ConnectStart }

// Timing is what TimingScript returned.
type Timing struct {
	Nav       *Entry  `json:"nav"`
	Resources []Entry `json:"resources"`
	APIError  string  `json:"api_error"`
}

// ErrNoLoad is returned (wrapped) by ParseTiming for a page whose
// navigation entry is missing or whose load event has not ended.
var ErrNoLoad = errors.New("page not loaded")

// ParseTiming parses TimingScript's JSON. Errors: not its JSON, ErrNoLoad.
func ParseTiming(s string) (Timing, error) {
	var t Timing
	if err := json.Unmarshal([]byte(s), &t); err != nil {
		return t, fmt.Errorf("parse page timing: %w", err)
	}
	if t.Nav == nil {
		return t, fmt.Errorf("parse page timing: %w: no navigation entry", ErrNoLoad)
	}
	if t.Nav.LoadEventEnd <= 0 {
		return t, fmt.Errorf("parse page timing: %w: loadEventEnd %.1f", ErrNoLoad, t.Nav.LoadEventEnd)
	}
	return t, nil
}

// PageTimes is what one load's timing says.
type PageTimes struct {
	// LoadMS is loadEventEnd - startTime of the navigation entry, ms.
	LoadMS float64 `json:"load_ms"`
	// CompleteMS is when the page had everything: LoadMS, or on a page
	// with an API call the later of it and the call's responseEnd (a
	// fetch does not hold the load event back), ms.
	CompleteMS float64 `json:"complete_ms"`
	// APIMS is the API call's responseEnd - startTime, ms; 0 without one.
	APIMS float64 `json:"api_ms,omitempty"`
	// Images is the image entries; ImageBytes their transfer sizes.
	Images     int     `json:"images"`
	ImageBytes float64 `json:"image_bytes"`
	// Protocols counts the ALPN protocol of the navigation and every
	// resource ("h2": 101).
	Protocols map[string]int `json:"protocols"`
	// BrowserConnects is how many entries opened a connection, as the
	// browser reports it (Entry.Opened); nginx's count is the judged one.
	BrowserConnects int `json:"browser_connects"`
	// LastImageEndMS is the last image's responseEnd, ms.
	LastImageEndMS float64 `json:"last_image_end_ms"`
}

// Times derives PageTimes from t.
func (t Timing) Times() PageTimes {
	p := PageTimes{LoadMS: t.Nav.LoadEventEnd - t.Nav.Start, Protocols: map[string]int{}}
	p.CompleteMS = p.LoadMS
	all := append([]Entry{*t.Nav}, t.Resources...)
	for _, e := range all {
		p.Protocols[cmpOr(e.Protocol, "unknown")]++
		if e.Opened() {
			p.BrowserConnects++
		}
	}
	for _, e := range t.Resources {
		switch {
		case e.Type == "img":
			p.Images++
			p.ImageBytes += e.TransferSize
			p.LastImageEndMS = math.Max(p.LastImageEndMS, e.ResponseEnd-t.Nav.Start)
		case e.Type == "fetch" && strings.Contains(e.Name, "/api/"):
			p.APIMS = e.ResponseEnd - t.Nav.Start
			p.CompleteMS = math.Max(p.CompleteMS, p.APIMS)
		}
	}
	return p
}

// OnlyProtocol is the one ALPN protocol every entry used, "" when they
// differ.
func (p PageTimes) OnlyProtocol() string {
	if len(p.Protocols) != 1 {
		return ""
	}
	return slices.Collect(maps.Keys(p.Protocols))[0]
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
