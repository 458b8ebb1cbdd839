package main

import (
	"errors"
	"testing"
)

// TestImagesFor: each command asks ensure-images.sh for the images it
// starts and no more; a command it does not know, and any scenario run,
// gets every image.
func TestImagesFor(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmd  string
		args []string
		want string
	}{
		{"the case run", "run", []string{"COUNT=1000", "RTTS=3 10"}, "core"},
		{"run with the PostgreSQL ledger", "run", []string{"LEDGER=postgres", "WORKERS=2", "ACTIVE=competing"}, "core postgres"},
		{"run with a reference worker", "run", []string{"WORKER=node-fetch"}, "core workers"},
		{"one scenario", "run", []string{"SCENARIO=broker-cut"}, "all"},
		{"the whole catalog", "run", []string{"SCENARIO=all"}, "all"},
		{"the matrix", "matrix", nil, "core"},
		{"the scale benchmark", "scale", nil, "core postgres"},
		{"an audit", "audit", []string{"WORKER=go"}, "all"},
		{"the page loads", "pageload", nil, "core"},
		{"the client defaults", "client-defaults", nil, "core clients"},
		{"a command images does not know", "audit-probes", nil, "all"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := imagesFor(tc.cmd, tc.args, func(string) string { return "" })
			if err != nil {
				t.Fatalf("imagesFor(%s %q): %v", tc.cmd, tc.args, err)
			}
			if got != tc.want {
				t.Errorf("imagesFor(%s %q) = %q, want %q", tc.cmd, tc.args, got, tc.want)
			}
		})
	}
}

// TestImagesForBadArgument: a bad argument is the command's own usage
// error, not a guess at the images.
func TestImagesForBadArgument(t *testing.T) {
	_, err := imagesFor("run", []string{"COUNT=abc"}, func(string) string { return "" })
	var ue *UsageError
	if !errors.As(err, &ue) || ue.Key != "COUNT" {
		t.Fatalf("imagesFor(run COUNT=abc) = %v, want a UsageError for COUNT", err)
	}
}
