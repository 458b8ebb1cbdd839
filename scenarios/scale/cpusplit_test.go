package scale

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"
)

// writeProfile writes a CPU profile whose samples have the given stacks
// (leaf first) and CPU nanoseconds.
func writeProfile(t *testing.T, stacks [][]string, ns []int64) string {
	t.Helper()
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 10_000_000,
	}
	fns := map[string]*profile.Function{}
	for i, st := range stacks {
		var locs []*profile.Location
		for _, name := range st {
			f, ok := fns[name]
			if !ok {
				f = &profile.Function{ID: uint64(len(fns) + 1), Name: name}
				fns[name] = f
				p.Function = append(p.Function, f)
			}
			l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
			p.Location = append(p.Location, l)
			locs = append(locs, l)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{1, ns[i]}})
	}
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSplitProfiles: each sample goes to the first part with a marker in
// its stack, wherever the marker is: an ack's socket write (amqp091's
// connection frames under genAcker.Ack) is the ack's, not the broker
// reader's; a pgx read under the ledger's group is the ledger's; a
// runtime-only stack is other. ms per send is the part's CPU over the
// messages handled.
func TestSplitProfiles(t *testing.T) {
	const w = "github.com/notifier-lab/notifier-lab/worker"
	path := writeProfile(t, [][]string{
		{"syscall.Syscall", "github.com/rabbitmq/amqp091-go.(*Connection).send", "github.com/rabbitmq/amqp091-go.(*Channel).Ack", w + ".genAcker.Ack", w + ".(*Handler).handle"},
		{"github.com/rabbitmq/amqp091-go.(*reader).ReadFrame", "github.com/rabbitmq/amqp091-go.(*Connection).reader"},
		{"github.com/jackc/pgx/v5/pgconn.(*PgConn).receiveMessage", w + "/ledger.(*pgGroup).send"},
		{"crypto/tls.(*Conn).Write", "golang.org/x/net/http2.(*ClientConn).RoundTrip", w + "/vendorapi.(*Client).Send"},
		{"runtime.futex", "runtime.schedule"},
	}, []int64{2e6, 1e6, 3e6, 4e6, 1e6})
	got, err := SplitProfiles([]string{path}, []string{"pprof/x.pprof"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"ack": 0.2, "broker receive": 0.1, "ledger": 0.3, "send": 0.4, SplitOther: 0.1, "decode": 0}
	for _, p := range got.Parts {
		if w, ok := want[p.Name]; ok && p.MSPerSend != w {
			t.Errorf("%s: %.3f ms/send; want %.3f", p.Name, p.MSPerSend, w)
		}
	}
	if got.SampledS != 0.011 || got.Handled != 10 {
		t.Errorf("sampled %.3f s over %d; want 0.011 over 10", got.SampledS, got.Handled)
	}
	if _, err := SplitProfiles([]string{path}, nil, 0); err == nil {
		t.Error("SplitProfiles with 0 handled: no error")
	}
}

// TestMSPerSend: cores over sends/s, by role, summed as stack.
func TestMSPerSend(t *testing.T) {
	p := Point{SendsPerS: 500, HostBusyCores: 1.5, Containers: []ContainerCPU{
		{Name: "w1", Role: RoleWorker, Cores: 0.25}, {Name: "pg", Role: "postgres", Cores: 0.1}}}
	m := MSPerSend(p)
	if m[RoleWorker] != 0.5 || m["postgres"] != 0.2 || m["stack"] != 0.7 || m["host"] != 3 {
		t.Errorf("MSPerSend = %v; want worker 0.5, postgres 0.2, stack 0.7, host 3", m)
	}
}
