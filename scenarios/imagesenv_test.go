package scenarios

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestImagesEnvSourcesWithSeveralImageSets: the .lab/images.env that
// vendormock/images/ensure-images.sh writes is sourced by run.sh under
// `set -euo pipefail` (prerequisites). With an image set of two words
// ("core postgres", what `lab images scale` asks for) an unquoted
// LAB_IMAGE_SET=core postgres runs "postgres" as a command: on a host with
// PostgreSQL installed it printed '"root" execution of the PostgreSQL
// server is not permitted' and run.sh exited 1 before the lab started
// (every scale run at 80def7b); without it, "postgres: command not found".
// The test renders the script's own heredoc with two words and sources it
// the way run.sh does, with a PATH where "postgres" is a command that
// fails loudly.
func TestImagesEnvSourcesWithSeveralImageSets(t *testing.T) {
	b, err := os.ReadFile("../vendormock/images/ensure-images.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?ms)^cat >"\$env_new" <<EOF\n.*?^EOF\n`).Find(b)
	if m == nil {
		t.Fatal(`ensure-images.sh has no 'cat >"$env_new" <<EOF' block`)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// A planted "postgres" on the PATH: sourcing must never run it.
	if err := os.WriteFile(filepath.Join(bin, "postgres"), []byte("#!/bin/sh\necho planted postgres ran >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "set -euo pipefail\nenv_new=" + filepath.Join(dir, "images.env") + "\n" +
		"kind=offline set_words='core postgres' RABBITMQ_IMAGE=r NGINX_IMAGE=n WIREMOCK_IMAGE=w TOXIPROXY_IMAGE=t WORKER_IMAGE=k STREAMRESET_IMAGE=\n" + string(m) +
		"set -a\n. \"$env_new\"\nset +a\nprintf '%s' \"$LAB_IMAGE_SET\"\n"
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sourcing the images.env ensure-images.sh writes failed: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "core postgres" {
		t.Errorf("LAB_IMAGE_SET after sourcing = %q, want %q", got, "core postgres")
	}
}
