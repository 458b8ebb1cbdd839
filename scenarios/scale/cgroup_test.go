package scale

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// plant writes files under root.
func plant(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCgroupFSReadsV1AndV2: a container's CPU time from cgroup v1's
// cpuacct.usage (ns) and v2's cpu.stat (usage_usec), its processes' RSS
// summed from /proc (a pid that exited counts 0), and ErrNoCgroup for an
// unknown container.
func TestCgroupFSReadsV1AndV2(t *testing.T) {
	root, proc := t.TempDir(), t.TempDir()
	plant(t, root, map[string]string{
		"cpuacct/docker/aaa/cpuacct.usage":           "1500000000\n",
		"cpuacct/docker/aaa/cgroup.procs":            "10\n11\n12\n",
		"system.slice/docker-bbb.scope/cpu.stat":     "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n",
		"system.slice/docker-bbb.scope/cgroup.procs": "20\n",
	})
	plant(t, proc, map[string]string{
		"10/status": "Name:\tnotifier-worker\nVmPeak:\t  90000 kB\nVmRSS:\t   20480 kB\n",
		"11/status": "Name:\tsh\nVmRSS:\t    1024 kB\n",
		"20/status": "Name:\tpostgres\nVmRSS:\t    2048 kB\n",
	})
	fs := cgroupFS{Root: root, Proc: proc}
	for id, want := range map[string]int64{"aaa": 1_500_000_000, "bbb": 2_500_000_000} {
		got, err := fs.CPUNanos(id)
		if err != nil || got != want {
			t.Errorf("CPUNanos(%s) = %d, %v; want %d", id, got, err, want)
		}
	}
	if got, err := fs.RSSBytes("aaa"); err != nil || got != (20480+1024)*1024 {
		t.Errorf("RSSBytes(aaa) = %d, %v; want %d (VmRSS of 10 and 11; 12 exited)", got, err, (20480+1024)*1024)
	}
	if got, err := fs.RSSBytes("bbb"); err != nil || got != 2048*1024 {
		t.Errorf("RSSBytes(bbb) = %d, %v", got, err)
	}
	if _, err := fs.CPUNanos("ccc"); !errors.Is(err, ErrNoCgroup) {
		t.Errorf("CPUNanos(unknown) = %v, want ErrNoCgroup", err)
	}
	plant(t, root, map[string]string{"docker/ddd/cpu.stat": "user_usec 1\n"})
	if _, err := fs.CPUNanos("ddd"); err == nil {
		t.Error("a cpu.stat without usage_usec read as a number")
	}
}

// TestHostTicks: busy is every /proc/stat cpu column but idle and
// iowait; a file without the cpu line is an error.
func TestHostTicks(t *testing.T) {
	proc := t.TempDir()
	plant(t, proc, map[string]string{"stat": "cpu  100 5 50 800 20 3 2 0 0 0\ncpu0 50 2 25 400 10 1 1 0 0 0\n"})
	busy, total, err := cgroupFS{Proc: proc}.HostTicks()
	if err != nil || busy != 160 || total != 980 {
		t.Errorf("HostTicks = %d, %d, %v; want 160 busy of 980", busy, total, err)
	}
	plant(t, proc, map[string]string{"stat": "intr 1 2 3\n"})
	if _, _, err := (cgroupFS{Proc: proc}).HostTicks(); err == nil {
		t.Error("a stat without the cpu line read as ticks")
	}
	t0 := time.Now()
	s := Series{Host: []HostSample{{At: t0, Busy: 100, Total: 1000}, {At: t0.Add(time.Second), Busy: 250, Total: 1200}, {At: t0.Add(2 * time.Second), Busy: 400, Total: 1400}}}
	if got := s.HostBusy(t0, t0.Add(2*time.Second)); got != 0.75 {
		t.Errorf("HostBusy = %v, want 0.75", got)
	}
	if got := s.HostBusy(t0.Add(3*time.Second), t0.Add(4*time.Second)); got != 0 {
		t.Errorf("HostBusy outside the samples = %v, want 0", got)
	}
}

// TestSamplerFollowsContainers: containers that appear during sampling
// get their own series, a worker's with RSS, a service's without; a
// container whose cgroup is gone is an error kept, not a stop.
func TestSamplerFollowsContainers(t *testing.T) {
	root, proc := t.TempDir(), t.TempDir()
	plant(t, root, map[string]string{
		"cpuacct/docker/w1/cpuacct.usage": "1000\n", "cpuacct/docker/w1/cgroup.procs": "7\n",
		"cpuacct/docker/ng/cpuacct.usage": "5000\n", "cpuacct/docker/ng/cgroup.procs": "8\n",
	})
	plant(t, proc, map[string]string{"7/status": "VmRSS:\t 4096 kB\n", "8/status": "VmRSS:\t 4096 kB\n", "stat": "cpu  1 0 1 10 0 0 0 0 0 0\n"})
	calls := 0
	s := &Sampler{Interval: 10 * time.Millisecond, fs: cgroupFS{Root: root, Proc: proc},
		list: func(context.Context) ([]Container, error) {
			calls++
			cs := []Container{{ID: "ng", Name: "nginx"}, {ID: "gone", Name: "wiremock"}}
			if calls > 2 {
				cs = append(cs, Container{ID: "w1", Name: "pooled-10ms-worker-1"})
			}
			return cs, nil
		}}
	s.Start(context.Background())
	time.Sleep(80 * time.Millisecond)
	got := s.Stop(context.Background())
	if len(got.Samples["ng"]) < 3 || len(got.Samples["w1"]) == 0 {
		t.Fatalf("samples: nginx %d, worker %d; want nginx from the start, the worker once it appeared", len(got.Samples["ng"]), len(got.Samples["w1"]))
	}
	if len(got.Samples["w1"]) >= len(got.Samples["ng"]) {
		t.Errorf("the worker has %d samples, nginx %d: the worker appeared later", len(got.Samples["w1"]), len(got.Samples["ng"]))
	}
	if got.Samples["w1"][0].RSSBytes != 4096*1024 || got.Samples["ng"][0].RSSBytes != 0 {
		t.Errorf("RSS: worker %d, nginx %d; want the worker's only", got.Samples["w1"][0].RSSBytes, got.Samples["ng"][0].RSSBytes)
	}
	if len(got.Host) < 3 {
		t.Errorf("%d host samples, want one per reading", len(got.Host))
	}
	if len(got.Errors) != 1 {
		t.Errorf("errors %q: want the gone container's, once", got.Errors)
	}
}

// TestContainerRole: services by name (a broker node too), anything
// else a worker.
func TestContainerRole(t *testing.T) {
	for name, want := range map[string]string{"nginx": "nginx", "rabbitmq": "rabbitmq", "rabbitmq-2": "rabbitmq", "postgres": "postgres",
		"pooled-10ms-worker-1": RoleWorker, "direct-https-pooled-c8": RoleWorker, "toxiproxy": "toxiproxy", "nginx-old": RoleWorker} {
		if got := (Container{Name: name}).Role(); got != want {
			t.Errorf("Role(%s) = %s, want %s", name, got, want)
		}
	}
}
