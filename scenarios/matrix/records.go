package matrix

import (
	"fmt"
	"slices"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/reconcile"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/worker/records"
)

// cellFromResult takes a bench Result's figures (worker driver).
func cellFromResult(c *results.MatrixCell, r results.Result) {
	c.Connections = r.TCPConnections
	c.WorkerState = r.WorkerState
	c.ClientTimeWait = r.TimeWait
	c.Lost, c.Duplicates = -1, -1
	if r.Reconcile != nil {
		c.Lost, c.Duplicates = r.Reconcile.Lost, r.Reconcile.Duplicates
	}
}

// addRecords reads a run's records and published list and fills the rate,
// latency, CPU and outcome fields.
func addRecords(c *results.MatrixCell, recordsPath, publishedPath string) error {
	published, err := reconcile.ReadPublishedFile(publishedPath)
	if err != nil {
		return fmt.Errorf("read published list: %w", err)
	}
	return addRecordsPublished(c, recordsPath, published)
}

// addRecordsPublished is addRecords with the published list given.
func addRecordsPublished(c *results.MatrixCell, recordsPath string, published []reconcile.Published) error {
	recs, err := records.ReadFile(recordsPath)
	if err != nil {
		return err
	}
	m := bench.NewMetrics(published)
	measured := map[string]bool{}
	for _, p := range published {
		if p.Valid && !p.Warmup {
			measured[p.RefKey] = true
		}
	}
	var totals []float64
	for _, r := range recs {
		m.Add(r)
		if measured[r.RefKey] && r.TotalMS > 0 {
			totals = append(totals, r.TotalMS)
		}
	}
	m.Close()
	slices.Sort(totals)
	c.ReqPerS, c.WallS = m.SendsPerS, m.WallS
	c.LatencyMS = results.MatrixLatency{P50: results.Percentile(totals, 0.50), P99: results.Percentile(totals, 0.99), P999: results.Percentile(totals, 0.999)}
	c.CPUMSPerReq, c.ClientCPUMSPerReq = m.CPUMSPerSend, m.ClientCPUMSPerSend
	c.CPUS = m.CPUMSPerSend * float64(m.Measured) / 1000
	c.Outcomes, c.Errors = m.Outcomes, m.Errors
	return nil
}
