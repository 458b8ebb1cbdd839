package main

import (
	"strings"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// Image extras beyond the core five (RabbitMQ, nginx, WireMock, Toxiproxy,
// the worker) that vendormock/images/ensure-images.sh builds only when
// LAB_IMAGE_SET names them.
const (
	imagesPostgres    = "postgres"
	imagesWorkers     = "workers"
	imagesStreamReset = "streamreset"
	imagesClients     = "clients"
	imagesAll         = "all"
	imagesCore        = "core"
)

// imagesFor returns the LAB_IMAGE_SET value (space-separated words) that
// the command cmd with args needs: "core" plus the extras it starts, or
// "all" for a command that may start anything (scenarios, audits, tests,
// a command this function does not know). It parses the arguments as the
// command does; a bad argument returns its *UsageError (run.sh checks the
// arguments first, so that never reaches a build).
//
//	run, check: postgres with LEDGER=postgres; workers with a WORKER other
//	            than go; SCENARIO=... needs all (a scenario may start a
//	            PostgreSQL ledger, another worker or the stream-reset proxy)
//	matrix:     as run without SCENARIO
//	scale:      postgres (its worker points share a PostgreSQL ledger)
//	            plus workers with a WORKER other than go
//	pageload:   core (nginx, WireMock and Toxiproxy)
//	client-defaults: core plus clients (the real HTTP clients' image)
func imagesFor(cmd string, args []string, getenv func(string) string) (string, error) {
	var cfg bench.Config
	extras := []string{imagesCore}
	switch cmd {
	case "run", "check":
		c, err := parseRunArgs(args, getenv)
		if err != nil {
			return "", err
		}
		if c.Scenario != "" {
			return imagesAll, nil
		}
		cfg = c
	case "matrix", "matrix-check":
		c, err := parseMatrixArgs(args, getenv)
		if err != nil {
			return "", err
		}
		cfg = c.Config
	case "scale", "scale-check":
		c, err := parseScaleArgs(args, getenv)
		if err != nil {
			return "", err
		}
		cfg = c.Config.Config
		extras = append(extras, imagesPostgres)
	case "pageload", "pageload-check":
		if _, _, err := parsePageloadArgs(args, getenv); err != nil {
			return "", err
		}
		return imagesCore, nil
	case "client-defaults", "client-defaults-check":
		if _, err := parseDefaultsArgs(args, getenv); err != nil {
			return "", err
		}
		return imagesCore + " " + imagesClients, nil
	default:
		return imagesAll, nil
	}
	if cfg.Ledger == vendormock.LedgerPostgres && !strings.Contains(strings.Join(extras, " "), imagesPostgres) {
		extras = append(extras, imagesPostgres)
	}
	if cfg.Worker != "" && cfg.Worker != vendormock.WorkerGo && !strings.HasPrefix(cfg.Worker, vendormock.WorkerImagePrefix) {
		extras = append(extras, imagesWorkers)
	}
	return strings.Join(extras, " "), nil
}
