package fault

import (
	"slices"
	"time"

	"github.com/notifier-lab/notifier-lab/vendormock"
	"github.com/notifier-lab/notifier-lab/worker/message"
	"github.com/notifier-lab/notifier-lab/worker/vendorapi"
)

// applyDefaults fills what a scenario file left out; the defaults are
// listed on each field of the spec types.
func (sc *Scenario) applyDefaults() {
	if sc.Kind == "" {
		sc.Kind = KindFault
	}
	if sc.Network.RTTMS == 0 && sc.Kind == KindFault {
		sc.Network.RTTMS = 3
	}
	if sc.Server.DelayMS == nil {
		d := 18
		sc.Server.DelayMS = &d
	}
	if sc.Client.Strategy == "" {
		sc.Client.Strategy = vendorapi.PooledName
	}
	if sc.Client.RetryDelay == 0 {
		sc.Client.RetryDelay = Duration(2 * time.Second)
	}
	if sc.Client.MaxAttempts == 0 {
		sc.Client.MaxAttempts = 5
	}
	if sc.Client.Concurrency == 0 {
		sc.Client.Concurrency = 1
	}
	if sc.Client.HTTPVersion == "" {
		sc.Client.HTTPVersion = "1.1"
	}
	if sc.Workload.Category == "" {
		sc.Workload.Category = string(message.Info)
	}
	if sc.Workload.Template == "" {
		sc.Workload.Template = "LAB_FAULT_01"
	}
	if sc.Workload.Seed == 0 {
		sc.Workload.Seed = 1
	}
	if sc.Workers != nil {
		sc.Workers.applyDefaults()
	}
	for i := range sc.Network.Toxics {
		sc.Network.Toxics[i].defaults()
	}
	for _, st := range sc.Steps {
		if st.ToxicAdd != nil {
			st.ToxicAdd.defaults()
		}
		if st.Send != nil && st.Send.Pacing.Mode == "" {
			st.Send.Pacing.Mode = "continuous"
		}
	}
	if r := sc.IdleRace; r != nil {
		if r.KeepaliveTimeout == 0 {
			r.KeepaliveTimeout = Duration(2 * time.Second)
		}
		if len(r.RTTsMS) == 0 {
			r.RTTsMS = []int{10, 150}
		}
		if r.Count == 0 {
			r.Count = 1000
		}
		if r.Burst == 0 {
			r.Burst = 10
		}
		if r.Spread == 0 {
			r.Spread = Duration(500 * time.Millisecond)
		}
		if r.PauseMin == 0 && r.PauseMax == 0 {
			r.PauseMin, r.PauseMax = r.KeepaliveTimeout-r.Spread, r.KeepaliveTimeout+r.Spread
		}
		if r.Seed == 0 {
			r.Seed = 1
		}
		if r.Margin == 0 {
			r.Margin = Duration(250 * time.Millisecond)
		}
		if r.ServerDelayMS == nil {
			d := 18
			r.ServerDelayMS = &d
		}
		if len(r.Settings) == 0 {
			r.Settings = slices.Clone(IdleSettings)
		}
	}
}

func (t *ToxicSpec) defaults() {
	if t.Stream == "" {
		t.Stream = "downstream"
	}
	if t.Proxy == "" {
		t.Proxy = vendormock.ProxyName
	}
}
