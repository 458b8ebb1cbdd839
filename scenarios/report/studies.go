package report

import (
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// StudyPoint is one published median of the Node keep-alive study over a
// simulated RTT (docs/studies.md, study B: Node 23.5, a proxy that delays
// every chunk by RTT/2 each way and holds the first byte until 1.5 RTT
// after connect, a server answering at once, TLS 1.3, 200 sequential calls
// per mode). Latencies are ms.
type StudyPoint struct {
	RTTMS      int
	ReusedP50  float64 // reused connection, median, ms
	NewConnP50 float64 // new connection per call, median, ms
}

// Ratio is NewConnP50 / ReusedP50.
func (p StudyPoint) Ratio() float64 { return p.NewConnP50 / p.ReusedP50 }

// nodeStudyPoints are study B's medians (docs/studies.md, "Sequential calls").
var nodeStudyPoints = []StudyPoint{
	{RTTMS: 150, ReusedP50: 155, NewConnP50: 462},
	{RTTMS: 380, ReusedP50: 385, NewConnP50: 1153},
}

// NodeStudyPoints returns a copy of study B's published medians.
func NodeStudyPoints() []StudyPoint { return append([]StudyPoint(nil), nodeStudyPoints...) }

// Study B's ratio band: new / reused stayed between 2.7x and 3.0x at every
// RTT from 1 ms to 380 ms (docs/studies.md, study B).
const (
	NodeStudyRatioLow   = 2.7
	NodeStudyRatioHigh  = 3.0
	NodeStudyRatioMinMS = 1
	NodeStudyRatioMaxMS = 380
)

// comparableWithNodeStudy reports whether rs were measured at study B's
// settings: the server answered at once (SERVER_DELAY_MS=0) and the
// per-request client used TLS 1.3. Only then do the sweep charts and
// section put the study's points beside the lab's.
func comparableWithNodeStudy(rs []results.Result) bool {
	if len(rs) == 0 {
		return false
	}
	for _, r := range rs {
		if r.ServerDelayMS != 0 {
			return false
		}
		if r.Mode != vendorapi.PooledName && r.TLSMax != "1.3" {
			return false
		}
	}
	return true
}
