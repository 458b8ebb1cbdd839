package fault

import (
	"os"
	"path/filepath"
)

// WorkerLogsDir is the folder of OUT where each scenario's worker stdout
// and stderr are kept, one <scenario>.log each (the scenario's work
// folder under .lab/ is not kept).
const WorkerLogsDir = "worker-logs"

// keepWorkerLog writes a contract worker's log of a scenario to
// OUT/WorkerLogsDir/<scenario>.log (an audit's evidence: the Go worker's
// runs keep theirs under WorkDir only); an empty log or no OUT writes
// nothing.
func (r *Runner) keepWorkerLog(scenario, logs string) {
	if r.opts.Out == "" || logs == "" || !r.contract() {
		return
	}
	dir := filepath.Join(r.opts.Out, WorkerLogsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	_ = os.WriteFile(filepath.Join(dir, scenario+".log"), []byte(logs), 0o644)
}
