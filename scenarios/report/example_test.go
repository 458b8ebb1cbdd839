package report_test

import (
	"os"

	"github.com/notifier-lab/notifier-lab/scenarios/report"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
)

func ExampleNewTextReporter() {
	rs := []results.Result{
		{Mode: "per-request", RTTMS: 10, Count: 1000, SendsPerS: 18.2, LatencyMS: results.Latency{P50: 54.6, P99: 60.3}, CPUMSPerSend: 2.91, WallS: 54.9, TCPConnections: 1050},
		{Mode: "pooled", RTTMS: 10, Count: 1000, SendsPerS: 31.6, LatencyMS: results.Latency{P50: 31.3, P99: 34.8}, CPUMSPerSend: 0.33, WallS: 31.6, TCPConnections: 1},
	}
	if err := report.NewTextReporter(rs)(os.Stdout); err != nil {
		panic(err)
	}
}
