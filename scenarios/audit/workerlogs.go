package audit

import "github.com/notifier-lab/notifier-lab/scenarios/fault"

// An audit keeps each fault scenario's worker stdout and stderr in
// OUT/worker-logs/<scenario>.log (fault.WorkerLogsDir); a later audit into
// the same OUT empties that folder like its other outputs.
func init() { Outputs.Dirs[fault.WorkerLogsDir] = []string{"*.log"} }
