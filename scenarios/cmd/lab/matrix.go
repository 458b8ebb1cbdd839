package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/matrix"
)

// parseMatrixArgs builds a matrix.Config from KEY=VALUE words, then the
// environment for keys no word set (parseWords with the matrix's keys).
// Errors are *UsageError.
func parseMatrixArgs(args []string, getenv func(string) string) (matrix.Config, error) {
	cfg := defaultsOf(cmdMatrix)
	_, err := parseWords(cmdMatrix, &cfg, args, getenv)
	return cfg.Config, err
}

// matrixUsage prints the matrix's keys.
func matrixUsage(w io.Writer) error {
	var b strings.Builder
	b.WriteString(`./run.sh matrix [KEY=VALUE...]: the published matrix (docs/studies.md, study A):
every scheme x client strategy x concurrency, with the client alone (DRIVERS
direct) and the whole worker (worker), one JSON per cell, OUT/matrix.md with
study A's figures beside ours as ratios, and OUT/charts/.

Every key can also be set in the environment; a word wins. An unknown key,
a key of ./run.sh alone or an invalid value exits 2 and starts nothing.

Keys, each shown with the matrix's default:
`)
	writeKeys(&b, cmdMatrix)
	_, err := io.WriteString(w, b.String())
	return err
}

// parseList reads one or more distinct values of allowed.
func parseList(v string, allowed []string) ([]string, error) {
	parts := fields(v)
	if len(parts) == 0 {
		return nil, fmt.Errorf("no value given")
	}
	var out []string
	for _, p := range parts {
		if _, err := oneOf(p, allowed); err != nil {
			return nil, err
		}
		if slices.Contains(out, p) {
			return nil, fmt.Errorf("%s given twice", p)
		}
		out = append(out, p)
	}
	return out, nil
}

// parseWholeList reads distinct whole numbers, each lo..hi.
func parseWholeList(v string, lo, hi int) ([]int, error) {
	parts := fields(v)
	if len(parts) == 0 {
		return nil, fmt.Errorf("no value given")
	}
	var out []int
	for _, p := range parts {
		n, err := parseInt(p, lo, hi)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", p, err)
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("%d given twice", n)
		}
		out = append(out, n)
	}
	return out, nil
}

// parseConcurrencies reads distinct concurrencies, each 1..MaxConcurrency.
func parseConcurrencies(v string) ([]int, error) {
	parts := fields(v)
	if len(parts) == 0 {
		return nil, fmt.Errorf("no concurrency given")
	}
	var out []int
	for _, p := range parts {
		n, err := parseConcurrency(p)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", p, err)
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("concurrency %d given twice", n)
		}
		out = append(out, n)
	}
	return out, nil
}
