package main

import (
	"os"
	"path/filepath"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// testcontainersLog is where the lab sends testcontainers-go's own log
// lines (container started, stopped, terminated), relative to the
// repository root where run.sh starts the lab: they fell between the lab's
// progress lines on the terminal (issue 29).
const testcontainersLog = ".lab/logs/testcontainers.log"

// quietTestcontainers appends testcontainers' lines to testcontainersLog,
// or leaves them on standard error when LAB_TESTCONTAINERS_LOG=stderr asks
// for them there, when the lab does not run where run.sh starts it (no
// .lab folder: a test, a hand-run binary; nothing is created there), or
// when the file cannot be opened.
func quietTestcontainers(getenv func(string) string) {
	if getenv("LAB_TESTCONTAINERS_LOG") == "stderr" {
		return
	}
	if fi, err := os.Stat(filepath.Dir(filepath.Dir(testcontainersLog))); err != nil || !fi.IsDir() {
		return
	}
	if err := os.MkdirAll(filepath.Dir(testcontainersLog), 0o755); err != nil {
		return
	}
	f, err := os.OpenFile(testcontainersLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	vendormock.LogTestcontainersTo(f)
}
