package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bad adapter file, or a WORKER that is not an image, is refused before
// anything starts, naming what is wrong and what is allowed.
func TestBlackBoxArgsRefuseBadInputFirst(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("queues: {consume: in}\nmessage: {body: '{\"to\": \"{{recipient}}\"}'}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("env_names: {broker_url: A, queue: B, vendor_url: C, ca_file: D}\nqueues: {consume: in, routes: none}\nmessage: {body: '{\"id\": \"{{refkey}}\"}'}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"ADAPTER=" + filepath.Join(dir, "none.yaml")}, []string{"ADAPTER", "read adapter"}},
		{[]string{"ADAPTER=" + bad}, []string{"ADAPTER", "queues.routes: missing", "message.body: no {{refkey}}", "env_names: missing"}},
		{[]string{"ADAPTER=" + good, "WORKER=node-fetch"}, []string{"WORKER", "allowed: image:NAME"}},
		{[]string{"ADAPTER=" + good}, []string{"no image: set image: in the adapter file or give WORKER=image:NAME"}},
	} {
		_, ok, err := parseBlackBoxArgs(c.args, nil)
		var ue *UsageError
		if !ok || !errors.As(err, &ue) {
			t.Fatalf("%v: ok %t, err %v; want a *UsageError", c.args, ok, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v; want it to name %q", c.args, err, w)
			}
		}
	}
	if _, ok, err := parseBlackBoxArgs([]string{"WORKER=node-fetch"}, nil); ok || err != nil {
		t.Fatalf("no ADAPTER: ok %t, err %v; want not a black-box audit", ok, err)
	}
}

func TestContractCheckArgs(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "want the worker to check"},
		{[]string{"WORKER=go"}, "want the worker to check"},
		{[]string{"WORKER=node-fetch", "COUNT=3"}, "contract-check takes WORKER, PROFILE and OUT only"},
		{[]string{"WORKER=nope"}, "unknown worker"},
		{[]string{"WORKER=node-fetch", "PROFILE=nowhere"}, "PROFILE"},
	} {
		_, err := parseContractCheckArgs(c.args, nil)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v; want a *UsageError naming %q", c.args, err, c.want)
		}
	}
	a, err := parseContractCheckArgs([]string{"WORKER=python-session"}, nil)
	if err != nil || a.profile == "" {
		t.Fatalf("python-session: %+v, %v", a, err)
	}
}
