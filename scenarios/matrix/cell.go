package matrix

import (
	"context"
	"io"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// DirectCell runs one direct cell (`notifier-worker direct` in a worker
// container with 1 CPU, the client alone) on a started stack whose RTT
// is already cfg's: cfg.Count measured sends after cfg.Warmup, mode and
// concurrency as given, scheme the stack's, its records under
// workDir/<cell name>. The scale benchmark (scenarios/scale) runs it
// beside the whole worker. Errors: *bench.RunError.
func DirectCell(ctx context.Context, cfg Config, stack *vendormock.Stack, workDir string, env results.Environment, mode string, concurrency int) (results.MatrixCell, error) {
	m := &matrixRun{cfg: cfg, w: io.Discard, workDir: workDir, stack: stack, env: env}
	return m.runDirect(ctx, matrixCellSpec{scheme: stack.Scheme, driver: results.DriverDirect, mode: mode, concurrency: concurrency})
}
