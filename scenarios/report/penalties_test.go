package report

import (
	"math"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/netmodel"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/window"
)

func TestPenalties(t *testing.T) {
	rs := []results.Result{
		{Mode: "per-request", RTTMS: 10, TLSMax: "1.2", TCPHandshake: netmodel.HandshakeOn, LatencyMS: results.Latency{P50: 66}},
		{Mode: "pooled", RTTMS: 10, TCPHandshake: netmodel.HandshakeOn, LatencyMS: results.Latency{P50: 30}},
		{Mode: "per-request", RTTMS: 0, TLSMax: "1.3", LatencyMS: results.Latency{P50: 20}},
		{Mode: "pooled", RTTMS: 0, LatencyMS: results.Latency{P50: 19}},
		{Mode: "pooled", RTTMS: 50, LatencyMS: results.Latency{P50: 69}}, // no per-request: no penalty
	}
	ps := Penalties(rs)
	if len(ps) != 2 {
		t.Fatalf("got %d penalties, want 2 (RTT 0 and 10): %+v", len(ps), ps)
	}
	zero, ten := ps[0], ps[1]
	if zero.RTTMS != 0 || zero.ModelRTTs != 1 || zero.TCPHandshake != netmodel.HandshakeOff || !math.IsNaN(zero.MeasuredRTTs) {
		t.Errorf("RTT 0: %+v; want model 1 RTT (TLS 1.3, handshake off by default) and NaN measured RTTs", zero)
	}
	if ten.ModelRTTs != 3 || ten.ModelMS != 30 || ten.MeasuredMS != 36 || ten.MeasuredRTTs != 3.6 || ten.Ratio != 2.2 {
		t.Errorf("RTT 10: %+v; want model 3 RTT = 30 ms, measured 36 ms = 3.6 RTT, ratio 2.2", ten)
	}
}

func TestLatestStart(t *testing.T) {
	w := window.Default()
	tests := []struct {
		name string
		d    time.Duration
		want string
	}{
		{"zero", 0, "20:50:00"},
		// The case's projection: 10,000 x 28.2 ms = 4 min 42 s (docs/case.md).
		{"case per-request", 282 * time.Second, "20:45:18"},
		{"rounds down a part second", 1500 * time.Millisecond, "20:49:58"},
		{"exactly the window", w.End - w.Start, "08:00:00"},
		{"longer than the window", w.End - w.Start + time.Second, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LatestStart(tt.d, w); got != tt.want {
				t.Errorf("LatestStart(%s) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}

func TestProject(t *testing.T) {
	w := window.Default()
	// The case's production medians (docs/case.md): 28.2 ms and 11.0 ms a
	// send give 4 min 42 s and 1 min 50 s for 10,000.
	r := results.Result{Mode: "per-request", RTTMS: 3, LatencyMS: results.Latency{P50: 28.2}, Measured: 1000, WallS: 25}
	p := Project(r, DefaultBulk, w)
	if p.AtP50 != 282*time.Second || formatDuration(p.AtP50) != "4 min 42 s" {
		t.Errorf("AtP50 = %s (%s), want 4 min 42 s", p.AtP50, formatDuration(p.AtP50))
	}
	if p.AtRate != 250*time.Second {
		t.Errorf("AtRate = %s, want 250 s (10,000 x 25 s / 1,000)", p.AtRate)
	}
	if p.LatestStart != "20:45:18" {
		t.Errorf("LatestStart = %q, want 20:45:18 (the longer projection)", p.LatestStart)
	}
	slow := Project(results.Result{LatencyMS: results.Latency{P50: 11.0}, Measured: 100, WallS: 2}, DefaultBulk, w)
	if slow.AtRate != 200*time.Second || slow.LatestStart != "20:46:40" {
		t.Errorf("rate-bound projection %+v; want at rate 200 s and start 20:46:40", slow)
	}
	none := Project(results.Result{LatencyMS: results.Latency{P50: 10}}, 100, w)
	if none.AtRate != 0 || none.AtP50 != time.Second {
		t.Errorf("no wall time: %+v; want AtRate 0 and AtP50 1 s", none)
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		12300 * time.Millisecond:                  "12.3 s",
		110 * time.Second:                         "1 min 50 s",
		time.Hour + 2*time.Minute + 5*time.Second: "1 h 02 min 05 s",
	} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestComparableWithNodeStudy(t *testing.T) {
	ok := []results.Result{{Mode: "per-request", TLSMax: "1.3"}, {Mode: "pooled"}}
	if !comparableWithNodeStudy(ok) {
		t.Error("delay 0 and TLS 1.3: want comparable")
	}
	if comparableWithNodeStudy([]results.Result{{Mode: "per-request", TLSMax: "1.2"}, {Mode: "pooled"}}) {
		t.Error("TLS 1.2: want not comparable")
	}
	if comparableWithNodeStudy([]results.Result{{Mode: "pooled", ServerDelayMS: 18}}) {
		t.Error("delay 18: want not comparable")
	}
	if p := NodeStudyPoints()[0]; math.Abs(p.Ratio()-2.98) > 0.005 {
		t.Errorf("study B at 150 ms: ratio %.3f, want 2.98 (docs/studies.md)", p.Ratio())
	}
}
