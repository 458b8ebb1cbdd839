package vendormock

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeDockerBin writes a docker, dockerd, id and pgrep to dir for
// ensure-docker.sh: docker info answers once dockerd ran; dockerd writes
// the targets of its open file descriptors to fds, its pid to pid, and
// sleeps (the test kills it).
func fakeDockerBin(t *testing.T, dir, mark, fds, pid string) {
	t.Helper()
	files := map[string]string{
		"docker": `#!/bin/sh
case "$1" in
info) [ -f "` + mark + `" ] ;;
version) echo fake ;;
esac
`,
		"dockerd": `#!/bin/sh
echo $$ > "` + pid + `"
for f in /proc/$$/fd/*; do readlink "$f"; done > "` + fds + `.tmp"
mv "` + fds + `.tmp" "` + fds + `"
touch "` + mark + `"
exec sleep 60
`,
		"id":    "#!/bin/sh\necho 0\n",
		"pgrep": "#!/bin/sh\nexit 1\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEnsureDockerStartsDockerdWithoutTheCallersFiles: the dockerd that
// ensure-docker.sh starts holds none of its caller's file descriptors
// (found when a `flock lock ./run.sh` started the engine and dockerd kept
// the lock forever). The negative control: the same fake dockerd started
// directly with the file open shows it.
func TestEnsureDockerStartsDockerdWithoutTheCallersFiles(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	mark, fds, pid := filepath.Join(dir, "started"), filepath.Join(dir, "fds"), filepath.Join(dir, "pid")
	fakeDockerBin(t, bin, mark, fds, pid)
	osr := filepath.Join(dir, "os-release")
	if err := os.WriteFile(osr, []byte("ID=debian\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(dir, "measure.lock")
	lock, err := os.Create(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	killDockerd := func() {
		if b, err := os.ReadFile(pid); err == nil {
			if p, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
		_ = os.Remove(pid)
	}
	t.Cleanup(killDockerd)
	logPath := filepath.Join(dir, "dockerd.log")
	run := func(cmd *exec.Cmd, wait bool) []string {
		t.Helper()
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "LAB_OS_RELEASE="+osr, "LAB_DOCKERD_LOG="+logPath)
		cmd.ExtraFiles = []*os.File{lock}
		if wait {
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", cmd.Args, err, out)
			}
		} else if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			b, err := os.ReadFile(fds)
			if err == nil {
				_ = os.Remove(fds)
				return strings.Fields(string(b))
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the fake dockerd never listed its files", cmd.Args)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	script, _ := filepath.Abs(filepath.Join("images", "ensure-docker.sh"))
	held := run(exec.Command("bash", script), true)
	// Its own: stdin, the log, the listing's output and the shell's script.
	own := map[string]bool{"/dev/null": true, logPath: true, fds + ".tmp": true, filepath.Join(bin, "dockerd"): true}
	for _, f := range held {
		if !own[f] {
			t.Errorf("dockerd started by ensure-docker.sh holds %s open (the caller's): %v", f, held)
		}
	}
	killDockerd()
	_ = os.Remove(mark)
	// The control: started directly, the fake shows the inherited file.
	direct := run(exec.Command(filepath.Join(bin, "dockerd")), false)
	found := false
	for _, f := range direct {
		found = found || f == lockPath
	}
	if !found {
		t.Errorf("control: the fake dockerd started with the lock open does not list it (%v): the check above could not fail", direct)
	}
}
