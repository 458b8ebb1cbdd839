package main

import (
	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/vendormock"
)

// parseWorker checks a WORKER value's name (vendormock.WorkerImage) without
// reading the image variables: they are loaded after the arguments are
// checked, so a missing reference image is reported when the run starts.
func parseWorker(v string) (string, error) {
	sel, err := vendormock.WorkerImage(v, func(string) string { return "checked-at-start" })
	if err != nil {
		return "", err
	}
	return sel.Name, nil
}

// checkWorker refuses the keys a contract worker cannot honour: replicas,
// another ledger or queue type (the reference workers run as one replica
// on a local ledger file, docs/worker-contract.md#what-the-reference-workers-do-not-do)
// and a Go CPU profile.
func checkWorker(cfg bench.Config, source string) error {
	if cfg.Worker == "" || cfg.Worker == vendormock.WorkerGo {
		return nil
	}
	bad := func(what string) error {
		return &UsageError{Key: "WORKER", Value: cfg.Worker, Source: source,
			Msg: what + " needs WORKER=go; allowed with another worker: WORKERS=1, BROKER_NODES=1, LEDGER=bbolt, QUEUE_TYPE=classic, CPU_PROFILE=off, CONCURRENCY=1, HTTP_VERSION=1.1"}
	}
	switch {
	case cfg.Replicated():
		return bad("WORKERS, LEDGER, QUEUE_TYPE or BROKER_NODES away from the default")
	case cfg.CPUProfile == "on":
		return bad("CPU_PROFILE=on")
	case cfg.Concurrency > 1:
		return bad("CONCURRENCY above 1 (the contract's prefetch is 1)")
	case cfg.HTTPVersion != "" && cfg.HTTPVersion != bench.DefaultHTTPVersion:
		return bad("HTTP_VERSION=" + cfg.HTTPVersion)
	}
	return nil
}
