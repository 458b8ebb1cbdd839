package scale

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// Parts of a worker's CPU (CPUSplit), in the order a sample is matched:
// the first part with a marker in any frame of the sample's stack takes
// it (so an ack's write to the broker's socket is the ack's, not the
// broker reader's).
var splitParts = []struct {
	name    string
	markers []string
}{
	{"records", []string{"notifier-lab/worker/records.", "worker.(*consumer).account"}},
	{"ack", []string{"worker.genAcker.", "worker.(*ackBatcher)", "amqp091-go.(*Channel).Ack", "amqp091-go.(*Channel).Nack", "amqp091-go.(*Channel).Reject"}},
	{"publish", []string{"worker.(*sessionPublisher)", "amqp091-go.(*Channel).Publish", "amqp091-go.(*DeferredConfirmation)"}},
	{"decode", []string{"notifier-lab/worker/message.", "worker.(*Handler).predecode"}},
	{"ledger", []string{"notifier-lab/worker/ledger.", "github.com/jackc/"}},
	{"send", []string{"notifier-lab/worker/vendorapi.", "net/http.", "golang.org/x/net/http2.", "crypto/tls."}},
	{"metrics", []string{"github.com/prometheus/"}},
	{"broker receive", []string{"github.com/rabbitmq/amqp091-go."}},
	{"GC", []string{"runtime.gcBgMarkWorker", "runtime.bgsweep", "runtime.bgscavenge"}},
	{"worker other", []string{"notifier-lab/notifier-lab/worker"}},
}

// SplitOther takes the samples no part claims (the scheduler, syscalls
// outside the worker's own stacks).
const SplitOther = "other"

// SplitPart is one part of a CPUSplit.
type SplitPart struct {
	Name string `json:"name"`
	// MSPerSend is the part's CPU per handled message, ms; Share its
	// fraction of the profile's samples.
	MSPerSend float64 `json:"ms_per_send"`
	Share     float64 `json:"share"`
}

// CPUSplit is where a worker process's CPU went, from its Go CPU profile
// (CPU_PROFILE=on): the profile's sampled CPU split into splitParts over
// the messages the process handled.
type CPUSplit struct {
	// Profiles are the profiles' files under OUT.
	Profiles []string `json:"profiles"`
	// SampledS is the CPU time the profiles sampled, s; Handled the
	// messages the processes handled over the profiled time (warm-up
	// included).
	SampledS float64     `json:"sampled_s"`
	Handled  int         `json:"handled"`
	Parts    []SplitPart `json:"parts"`
}

// SplitProfiles reads the Go CPU profiles at paths (one per replica) and
// splits their CPU over handled messages. names are the files as the
// result names them. Errors: a profile unreadable or without CPU samples,
// handled < 1.
func SplitProfiles(paths, names []string, handled int) (CPUSplit, error) {
	if handled < 1 {
		return CPUSplit{}, fmt.Errorf("split cpu profile: %d messages handled; want at least 1", handled)
	}
	ns := map[string]int64{}
	var total int64
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return CPUSplit{}, fmt.Errorf("split cpu profile: %w", err)
		}
		prof, err := profile.Parse(f)
		f.Close()
		if err != nil {
			return CPUSplit{}, fmt.Errorf("split cpu profile %s: %w", p, err)
		}
		idx := slices.IndexFunc(prof.SampleType, func(st *profile.ValueType) bool { return st.Type == "cpu" && st.Unit == "nanoseconds" })
		if idx < 0 {
			return CPUSplit{}, fmt.Errorf("split cpu profile %s: no cpu/nanoseconds sample type", p)
		}
		for _, s := range prof.Sample {
			v := s.Value[idx]
			ns[partOf(s)] += v
			total += v
		}
	}
	if total == 0 {
		return CPUSplit{}, fmt.Errorf("split cpu profile: no CPU samples in %v", names)
	}
	out := CPUSplit{Profiles: names, SampledS: round3(float64(total) / 1e9), Handled: handled}
	for _, part := range append(partNames(), SplitOther) {
		v := ns[part]
		out.Parts = append(out.Parts, SplitPart{Name: part, MSPerSend: round3(float64(v) / 1e6 / float64(handled)), Share: round3(float64(v) / float64(total))})
	}
	return out, nil
}

func partNames() []string {
	out := make([]string, len(splitParts))
	for i, p := range splitParts {
		out[i] = p.name
	}
	return out
}

// partOf names the part a sample belongs to (splitParts), SplitOther when
// none claims it.
func partOf(s *profile.Sample) string {
	for _, part := range splitParts {
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function == nil {
					continue
				}
				for _, m := range part.markers {
					if strings.Contains(line.Function.Name, m) {
						return part.name
					}
				}
			}
		}
	}
	return SplitOther
}
