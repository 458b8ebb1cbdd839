//go:build integration

package audit

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/internal/lab"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// The example team worker (workers/examples/go-resty), audited black-box
// from its adapter file on sms: steady passes (each message sent once,
// one connection), and response-timeout catches what its code does on a
// timeout (it re-queues the message for a retry: the vendor gets it
// again), the duplicates rule failing with the refkeys. About 2.5 min.
func TestBlackBoxAuditsTheExampleTeamWorker(t *testing.T) {
	vendormock.EnsureTestcontainersEnv()
	images, err := vendormock.ImagesFromEnv()
	if err != nil {
		t.Fatalf("lab images: %v\nBuild them and load their names first: vendormock/images/ensure-images.sh && set -a && . .lab/images.env && set +a", err)
	}
	root, ok := lab.FindRepoRoot()
	if !ok {
		t.Fatal("no repository root")
	}
	out, err := exec.Command(filepath.Join(root, "workers/examples/go-resty/build.sh")).Output()
	if err != nil {
		t.Fatalf("build the example: %v", err)
	}
	a, err := LoadAdapter(filepath.Join(root, "workers/examples/go-resty/adapter.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "bb")
	err = RunBlackBox(ctx, BlackBoxOptions{Adapter: a, Image: strings.TrimSpace(string(out)), ProfileDir: filepath.Join(root, "vendormock/profiles/sms"),
		Out: dir, Count: 20, Only: []string{"steady", "response-timeout"}, Images: images, Session: os.Getenv(vendormock.EnvSession)}, io.Discard)
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("RunBlackBox: %v; want ErrFailed (response-timeout re-sends)", err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, MarkdownFile))
	page := string(md)
	for _, want := range []string{
		"### steady: PASS", "20 published: 20 sent once",
		"### response-timeout: FAIL", "2 sent twice or more",
		"| Reuses its connection | PASS |", "not judged: no records",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("audit.md lacks %q:\n%s", want, page)
		}
	}
	if logs, _ := os.ReadFile(filepath.Join(dir, "steady", "worker.log")); !strings.Contains(string(logs), "dispatch: consuming dispatch.inbox") {
		t.Errorf("steady/worker.log does not hold the worker's stdout:\n%s", logs)
	}
}
