package main

import (
	"cmp"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// precheck refuses what the arguments and the files already show cannot
// run, before run.sh installs or builds anything (exit 2, nothing
// started): a SCHEME the profile refuses (vendormock.SchemeFor: a profile
// that requires mutual TLS refuses plain http), and a WORKER=image:NAME
// whose image is not in the local Docker engine (the lab never pulls a
// worker image; a missing engine means no such image either).
func precheck(cfg bench.Config, sources map[string]string) error {
	dir, err := bench.ResolveProfile(cfg.Profile)
	if err != nil {
		return &UsageError{Key: "PROFILE", Value: cfg.Profile, Source: sources["PROFILE"], Msg: err.Error()}
	}
	p, err := vendormock.LoadProfile(dir)
	if err != nil {
		return &UsageError{Key: "PROFILE", Value: cfg.Profile, Source: sources["PROFILE"], Msg: err.Error()}
	}
	if _, err := vendormock.SchemeFor(p, vendormock.Scheme(cmp.Or(cfg.Scheme, bench.DefaultScheme))); err != nil {
		return &UsageError{Key: "SCHEME", Value: cfg.Scheme, Source: sources["SCHEME"],
			Msg: err.Error() + "; allowed with PROFILE=" + p.Name + ": https, mtls"}
	}
	if name, ok := strings.CutPrefix(cfg.Worker, "image:"); ok {
		if err := localImage(name); err != nil {
			return &UsageError{Key: "WORKER", Value: cfg.Worker, Source: sources["WORKER"], Msg: err.Error()}
		}
	}
	return nil
}

// localImage returns nil when the local Docker engine has image name, else
// an error saying how to get it there.
func localImage(name string) error {
	docker, err := exec.LookPath("docker")
	if err != nil {
		return fmt.Errorf("no docker command, so no local image %s: install Docker, then build or load the image (docker build / docker load); the lab never pulls a worker image", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, docker, "image", "inspect", "--format", "{{.Id}}", name).CombinedOutput(); err != nil {
		why := strings.TrimSpace(firstLine(string(out)))
		if why == "" {
			why = err.Error()
		}
		return fmt.Errorf("image %s is not in the local Docker engine (%s): build or load it first (docker build -t %s ... / docker load); the lab never pulls a worker image",
			name, why, name)
	}
	return nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
