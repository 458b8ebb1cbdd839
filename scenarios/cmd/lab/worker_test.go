package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeDocker puts a docker command first on PATH whose `image inspect`
// knows only the image have (the unit tests need no engine).
func fakeDocker(t *testing.T, have string) {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\n[ \"$1 $2\" = \"image inspect\" ] || exit 2\nfor a; do last=$a; done\n[ \"$last\" = \"" + have + "\" ] && { echo sha256:1; exit 0; }\necho \"Error: No such image: $last\" >&2; exit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func TestParseWorker(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    string // Config.Worker; "" = an error is expected
		wantMsg []string
	}{
		{"default is go", nil, "go", nil},
		{"reference worker", []string{"WORKER=node-agent-nokeepalive"}, "node-agent-nokeepalive", nil},
		{"a local image", []string{"WORKER=image:acme/worker:1"}, "image:acme/worker:1", nil},
		{"an image the engine does not have is refused before anything starts", []string{"WORKER=image:does/not:exist"}, "", []string{"WORKER", "not in the local Docker engine", "never pulls"}},
		{"sms refuses plain http", []string{"PROFILE=sms", "SCHEME=http"}, "", []string{"SCHEME", "requires mutual TLS", "allowed with PROFILE=sms: https, mtls"}},
		{"unknown names the known ones", []string{"WORKER=python"}, "", []string{"WORKER", "known: go, java-apache, ", "node-fetch, ", "python-session, python-session-fixed, image:NAME"}},
		{"image without a name", []string{"WORKER=image:"}, "", []string{"image:NAME"}},
		{"replicas need go", []string{"WORKER=java-shared", "WORKERS=2"}, "", []string{"needs WORKER=go"}},
		{"concurrency needs go", []string{"WORKER=node-fetch", "CONCURRENCY=8"}, "", []string{"CONCURRENCY above 1 (the contract's prefetch is 1) needs WORKER=go"}},
		{"cpu profile needs go", []string{"WORKER=node-fetch", "CPU_PROFILE=on"}, "", []string{"CPU_PROFILE=on needs WORKER=go"}},
	}
	fakeDocker(t, "acme/worker:1")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseKeys(tt.args, nil)
			if tt.want != "" {
				if err != nil || cfg.Worker != tt.want {
					t.Fatalf("parseKeys(%q) = Worker %q, %v; want %q", tt.args, cfg.Worker, err, tt.want)
				}
				return
			}
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("parseKeys(%q) error = %v; want *UsageError", tt.args, err)
			}
			for _, s := range tt.wantMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
}
