//go:build integration

package vendormock

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/worker/outcome"
)

// TestThirdPartyClients runs each third-party client's worker (issue 18)
// on the stack for a few sends: every send SENT once, the journal and
// nginx's log agree, and the connections are what the library's default
// makes of them (docs/worker-contract.md#implementations): a new one per
// send for a bare requests.post and Node 18's global agent, one kept
// connection for a Session, an httpx.Client, OkHttp and Apache's pool.
func TestThirdPartyClients(t *testing.T) {
	im := labImages(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	s := startStack(t, ctx, Options{Images: im, WorkDir: t.TempDir(), Log: testLog{t}})
	const n = 4
	for _, tc := range []struct {
		worker string
		conns  int // connections carrying the n sends
	}{
		{"python-requests", n},
		{"python-session", 1},
		{"python-httpx", 1},
		{"java-okhttp", 1},
		{"java-apache", 1},
		{"node-axios", n},
		{"node-got", n},
	} {
		t.Run(tc.worker, func(t *testing.T) {
			prefix := strings.ReplaceAll(tc.worker, "-", "")
			run := runContractWorker(t, ctx, s, tc.worker, "q-"+prefix, refkeysFor(prefix, n), nil)
			if len(run.recs) != n {
				t.Fatalf("%d records, want %d", len(run.recs), n)
			}
			for _, r := range run.recs {
				if r.Outcome != outcome.Sent || r.CPUMS <= 0 || r.End.Before(r.Start) {
					t.Errorf("record %+v: want SENT with the worker's CPU and start <= end", r)
				}
			}
			if len(run.journal) != n || len(run.sends) != n {
				t.Fatalf("journal %d, nginx %d sends of this run; want %d each (no send twice)", len(run.journal), len(run.sends), n)
			}
			if got := connections(run.sends); got != tc.conns {
				t.Errorf("%d connections for %d sends, want %d", got, n, tc.conns)
			}
			t.Logf("%s: %d sends over %d connections, TLS %s", tc.worker, n, connections(run.sends), run.sends[0].TLSProtocol)
		})
	}
}

// TestClientTestsInImages runs the library tests of the Python and Java
// images again in the built images (the build runs them too): the Python
// client tests against Debian's requests and httpx must run, not skip
// (they skip on a host without them), and OkHttp's ClientTest must pass.
func TestClientTestsInImages(t *testing.T) {
	if _, err := exec.LookPath("docker"); err != nil {
		t.Fatal("docker not found: the integration tests need the Docker engine (vendormock/images/ensure-docker.sh)")
	}
	image := func(key string) string {
		v := os.Getenv(key)
		if v == "" {
			t.Fatalf("%s is not set: run vendormock/images/ensure-images.sh and load %s (./run.sh test does both)", key, DefaultImagesEnvFile)
		}
		return v
	}
	run := func(t *testing.T, img string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		a := []string{"run", "--rm", "--network", "none", "--label", LabelSession + "=" + os.Getenv(EnvSession)}
		b, err := exec.CommandContext(ctx, "docker", append(append(a, args[:1]...), append([]string{img}, args[1:]...)...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("docker run %s: %v\n%s", img, err, b)
		}
		return string(b)
	}
	t.Run("python", func(t *testing.T) {
		out := run(t, image(EnvImageWorkerPython), "--entrypoint=python3", "-m", "unittest", "-v", "tests.test_clients")
		if !strings.Contains(out, "test_modes") || !strings.Contains(out, "\nOK") || strings.Contains(out, "skipped") {
			t.Fatalf("the client tests did not all run and pass:\n%s", out)
		}
	})
	t.Run("java-okhttp", func(t *testing.T) {
		out := run(t, image(EnvImageWorkerJava), "--entrypoint=java", "-cp", "classes:/usr/share/java/okhttp.jar:/usr/share/java/okio.jar", "notifierlab.ClientTest")
		if !strings.Contains(out, " 0 failed") {
			t.Fatalf("ClientTest did not pass:\n%s", out)
		}
		t.Logf("%s", strings.TrimSpace(out))
	})
}
