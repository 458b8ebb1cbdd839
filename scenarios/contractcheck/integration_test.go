//go:build integration

package contractcheck

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// A reference contract worker passes the check; the acker (a planted
// broken image: it acks without declaring queues, sending or writing
// records) fails it with each gap named. About a minute in all.
func TestContractCheckPassesAReferenceWorkerAndNamesTheAckersGaps(t *testing.T) {
	vendormock.EnsureTestcontainersEnv()
	images, err := vendormock.ImagesFromEnv()
	if err != nil {
		t.Fatalf("lab images: %v\nBuild them and load their names first: vendormock/images/ensure-images.sh && set -a && . .lab/images.env && set +a", err)
	}
	root, ok := lab.FindRepoRoot()
	if !ok {
		t.Fatal("no repository root")
	}
	out, err := exec.Command(root + "/workers/acker/build.sh").Output()
	if err != nil {
		t.Fatalf("build the acker: %v", err)
	}
	acker := strings.TrimSpace(string(out))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, c := range []struct {
		worker string
		want   []string // gaps that must be named; nil = none at all
	}{
		{"python-session", nil},
		{"image:" + acker, []string{"queue notifications.dead was never declared", "records file: not written"}},
	} {
		gaps, err := Run(ctx, Options{Worker: c.worker, ProfileDir: root + "/" + vendormock.DefaultProfileDir, Out: t.TempDir(),
			Images: images, Session: os.Getenv(vendormock.EnvSession)}, io.Discard)
		var names []string
		for _, g := range gaps {
			names = append(names, g.What)
		}
		if c.want == nil && (err != nil || len(gaps) > 0) {
			t.Fatalf("%s: %v, gaps %q; want none", c.worker, err, names)
		}
		for _, w := range c.want {
			if !strings.Contains(strings.Join(names, "\n"), w) {
				t.Errorf("%s: gaps %q; want one naming %q", c.worker, names, w)
			}
		}
	}
}
