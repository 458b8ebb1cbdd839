package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/cgroup"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// serverCPU is one reading of nginx's and Toxiproxy's container CPU time
// (cgroup user+sys), ns; err says why it could not be read.
type serverCPU struct {
	nginx, proxy int64
	err          error
}

// cgroupHost is the cgroup reader of serverCPU (a test seam).
var cgroupHost = cgroup.Host

// readServerCPU reads nginx's and Toxiproxy's CPU time now.
func (b *Bench) readServerCPU() serverCPU {
	var c serverCPU
	for _, x := range []struct {
		alias string
		into  *int64
	}{{vendormock.AliasNginx, &c.nginx}, {vendormock.AliasToxiproxy, &c.proxy}} {
		id, err := b.stack.ServiceContainerID(x.alias)
		if err == nil {
			*x.into, err = cgroupHost.CPUNanos(id)
		}
		if err != nil {
			c.err = fmt.Errorf("read %s cpu: %w", x.alias, err)
			return c
		}
	}
	return c
}

// perSendMS returns the CPU of nginx and Toxiproxy between two readings
// over sends, ms per send; -1, -1 when either reading failed or sends is 0.
func perSendMS(from, to serverCPU, sends int) (nginx, proxy float64) {
	if from.err != nil || to.err != nil || sends <= 0 {
		return -1, -1
	}
	return float64(to.nginx-from.nginx) / 1e6 / float64(sends), float64(to.proxy-from.proxy) / 1e6 / float64(sends)
}

// probeP50MS returns the p50 of n probe round trips through Toxiproxy,
// ms, or -1 with the error.
func (b *Bench) probeP50MS(ctx context.Context, n int) (float64, error) {
	rts, err := b.stack.ProbeRoundTrips(ctx, n)
	if err != nil {
		return -1, err
	}
	ms := make([]float64, len(rts))
	for i, d := range rts {
		ms[i] = float64(d) / float64(time.Millisecond)
	}
	slices.Sort(ms)
	return results.Percentile(ms, 0.5), nil
}
