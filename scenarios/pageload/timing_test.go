package pageload

import (
	"errors"
	"math"
	"os"
	"testing"
)

func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTimesOfAnImagePage reads a real load's timing (Chromium 156, 10
// images over HTTP/1.1): the load time is the navigation's loadEventEnd,
// every image counted, every entry on http/1.1, six connections opened.
func TestTimesOfAnImagePage(t *testing.T) {
	tm, err := ParseTiming(readFixture(t, "timing-p10-h1.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := tm.Times()
	if p.LoadMS != tm.Nav.LoadEventEnd-tm.Nav.Start || p.LoadMS < 100 || p.CompleteMS != p.LoadMS || p.APIMS != 0 {
		t.Errorf("load %.1f, complete %.1f, api %.1f; want loadEventEnd %.1f for both, no API", p.LoadMS, p.CompleteMS, p.APIMS, tm.Nav.LoadEventEnd)
	}
	if p.Images != 10 || p.OnlyProtocol() != "http/1.1" || p.Protocols["http/1.1"] != 11 {
		t.Errorf("%d images, protocols %v; want 10 images, 11 entries on http/1.1", p.Images, p.Protocols)
	}
	if p.BrowserConnects != 6 {
		t.Errorf("%d entries opened a connection; want 6", p.BrowserConnects)
	}
	if p.LastImageEndMS > p.LoadMS || p.LastImageEndMS <= 0 {
		t.Errorf("last image at %.1f ms, load at %.1f ms", p.LastImageEndMS, p.LoadMS)
	}
}

// TestTimesOfTheBackendPage: the page time is the API call's answer,
// after the load event (a fetch does not hold it back).
func TestTimesOfTheBackendPage(t *testing.T) {
	tm, err := ParseTiming(readFixture(t, "timing-backend-h2.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := tm.Times()
	if p.APIMS < 2000 || p.CompleteMS != p.APIMS || p.LoadMS >= p.APIMS {
		t.Errorf("load %.1f, api %.1f, complete %.1f; want the API's answer (after the 2 s delay) as the page time", p.LoadMS, p.APIMS, p.CompleteMS)
	}
	if p.OnlyProtocol() != "h2" || p.Images != 0 {
		t.Errorf("protocols %v, %d images", p.Protocols, p.Images)
	}
}

func TestParseTimingRefuses(t *testing.T) {
	for name, s := range map[string]string{
		"not JSON":           "{",
		"no navigation":      `{"nav":null,"resources":[]}`,
		"load not yet ended": `{"nav":{"name":"x","type":"navigation","load_event_end":0},"resources":[]}`,
	} {
		_, err := ParseTiming(s)
		if err == nil {
			t.Errorf("%s: parsed", name)
		}
		if name != "not JSON" && !errors.Is(err, ErrNoLoad) {
			t.Errorf("%s: %v; want ErrNoLoad", name, err)
		}
	}
}

func TestOnlyProtocolOfMixed(t *testing.T) {
	p := PageTimes{Protocols: map[string]int{"h2": 3, "http/1.1": 1}}
	if p.OnlyProtocol() != "" {
		t.Errorf("mixed protocols read as %q", p.OnlyProtocol())
	}
}

func TestQuantile(t *testing.T) {
	s := []float64{1, 2, 3, 4, 5}
	for q, want := range map[float64]float64{0.5: 3, 0.25: 2, 0.75: 4, 0: 1, 1: 5} {
		if got := quantile(s, q); got != want {
			t.Errorf("quantile(%v) = %v; want %v", q, got, want)
		}
	}
	if got := quantile([]float64{1, 2}, 0.5); got != 1.5 {
		t.Errorf("median of 1, 2 = %v", got)
	}
	if !math.IsNaN(quantile(nil, 0.5)) {
		t.Error("quantile of nothing is a number")
	}
}
