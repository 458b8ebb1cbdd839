package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// selfFixture writes an audit folder whose nginx log slice has 10
// warm-up sends of 200 ms and 100 measured sends of 20 to 22 ms
// ($request_time), on alimtalk's send path.
func selfFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var lines []string
	for i := 1; i <= 110; i++ {
		rt := 0.200
		if i > 10 {
			rt = 0.020 + float64(i%3)/1000
		}
		lines = append(lines, accessLine(1000+float64(i)/10, 1, i, "POST", send, 200, rt, "k"))
	}
	if err := os.MkdirAll(filepath.Join(dir, "nginx"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nginx", "access-x.log"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// selfRun is a Go worker bench run at 3 ms RTT whose records say p50
// p50 ms and cpu ms of CPU per send, its cgroup cgroup ms.
func selfRun(p50, cpu, cgroup float64) results.Result {
	return results.Result{Worker: vendormock.WorkerGo, Mode: "pooled", RTTMS: 3, Warmup: 10, AccessLog: "nginx/access-x.log",
		LatencyMS: results.Latency{P50: p50, P99: p50 + 5}, CPUMSPerSend: cpu, WorkerCgroupCPUMSPerSend: cgroup}
}

// TestNginxLatencyLeavesOutWarmup: the warm-up's slow sends (200 ms) do
// not reach nginx's p50/p99 of the measured sends.
func TestNginxLatencyLeavesOutWarmup(t *testing.T) {
	dir := selfFixture(t)
	p50, p99 := nginxLatency(dir, selfRun(25, 1, 1), send)
	if p50 != 21 || p99 != 22 {
		t.Errorf("p50 %v p99 %v; want 21 and 22 ms (the warm-up's 200 ms left out)", p50, p99)
	}
}

// TestSelfReportRule: a worker whose own figures agree with nginx's and
// its cgroup's passes; negative controls: one that reports a latency
// below what nginx took (planted 2 ms against nginx's 21 ms), one far
// above it, one whose CPU is a tenth of its container's, each FAIL with
// the figure's row marked DISAGREES; without records nothing is judged,
// and a missing outside figure prints "not seen", never 0.
func TestSelfReportRule(t *testing.T) {
	dir := selfFixture(t)
	cases := []struct {
		name     string
		run      results.Result
		verdict  string
		evidence []string
	}{
		{"agrees", selfRun(25.2, 0.79, 0.85), Pass, []string{"latency p50: worker 25.2 ms, nginx 21 ms: agrees", "CPU: worker 0.79 ms/send, cgroup 0.85: agrees"}},
		{"latency planted low", selfRun(2, 0.79, 0.85), Fail, []string{"DISAGREES: the worker reports 19 ms less than nginx took"}},
		{"latency planted high", selfRun(250, 0.79, 0.85), Fail, []string{"DISAGREES: above nginx + 4 RTT + 30 ms = 63 ms"}},
		{"CPU planted low", selfRun(25.2, 0.5, 5), Fail, []string{"CPU: worker 0.50 ms/send, cgroup 5.00: DISAGREES by 4.50 ms"}},
		{"cgroup not seen", selfRun(25.2, 0.79, -1), Pass, []string{"cgroup not seen"}},
	}
	for _, c := range cases {
		in := Inputs{Worker: vendormock.WorkerGo, Profile: "alimtalk", Dir: dir, Bench: []results.Result{c.run}}
		r := selfReportRule(in, in.workerRuns())
		if r.Verdict != c.verdict {
			t.Errorf("%s: verdict %s, want %s; evidence %s", c.name, r.Verdict, c.verdict, r.Evidence)
		}
		for _, want := range c.evidence {
			if !strings.Contains(r.Evidence, want) {
				t.Errorf("%s: evidence %q; want it to contain %q", c.name, r.Evidence, want)
			}
		}
		f := in.figure(c.run)
		if got := strings.Contains(f.SelfCheck, "DISAGREES"); got != (c.verdict == Fail) {
			t.Errorf("%s: figure's check %q: DISAGREES %v, want %v", c.name, f.SelfCheck, got, c.verdict == Fail)
		}
	}

	// A contract worker without records: latency from nginx, no CPU.
	nr := selfRun(21, -1, 0.9)
	nr.Worker = "image:team/worker"
	nr.Contract = &results.ContractCheck{Sources: map[string]string{
		"latency p50/p99, sends/s": results.SourceNginx + " ($request_time)", "CPU per send": results.SourceNotMeasure}}
	in := Inputs{Worker: nr.Worker, Profile: "alimtalk", Dir: dir, Bench: []results.Result{nr}}
	r := selfReportRule(in, in.workerRuns())
	if r.Verdict != NA || !strings.Contains(r.Evidence, "latency: not judged: no records; CPU: not judged: no records") {
		t.Errorf("no records: %s %q; want N/A, not judged: no records", r.Verdict, r.Evidence)
	}
	md := Markdown(Report{Worker: nr.Worker, Profile: "alimtalk", Figures: []Figure{in.figure(nr), (Inputs{Profile: "alimtalk"}).figure(selfRun(25, 0.8, 0))}})
	row := md[strings.LastIndex(md, "| go (pooled) |"):]
	if !strings.Contains(row, "| not seen / not seen | 0.80 | not seen |") {
		t.Errorf("a run without nginx's log or cgroup reading: %q; want not seen, never 0", row)
	}
}

// TestBlackBoxOutsideFigures: a black-box audit's latency-cpu rule is not
// judged (no records) but shows what the lab saw from outside in the
// steady scenario; what it could not read is "not seen", never 0.
func TestBlackBoxOutsideFigures(t *testing.T) {
	runs := []BlackBoxResult{{Name: "tls-stall", Nginx: &NginxFigures{Sends: 3, P50MS: 900}},
		{Name: "steady", Nginx: &NginxFigures{Sends: 50, P50MS: 21, P99MS: 30}, CgroupCPUMSPerSend: 0.8}}
	got := outsideFigures(runs)
	if want := "nginx send p50 21 ms, p99 30 ms ($request_time, server side); the container's CPU 0.80 ms per send"; !strings.Contains(got, want) {
		t.Errorf("outsideFigures = %q; want %q", got, want)
	}
	got = outsideFigures([]BlackBoxResult{{Name: "steady", CgroupCPUMSPerSend: -1}})
	if strings.Count(got, "not seen") != 3 || strings.Contains(got, " 0 ms") {
		t.Errorf("nothing read: %q; want not seen three times, never 0", got)
	}
}
