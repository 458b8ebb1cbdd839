// Package bench is the bench driver: it starts the vendor stack once, runs
// one point (a client strategy at one RTT) after the other, and turns what
// the worker, nginx and WireMock saw into a results.Result per point,
// then the summary (package report).
//
// It owns the run's Config and its defaults and limits, the points
// (Bench.RunPoint, exported for the matrix), the worker kinds behind one
// interface (workerKind: kind_single.go one Go worker, kind_replicas.go
// Go worker replicas under single active consumer, kind_contract.go a
// contract worker of docs/worker-contract.md) and the one wait on a
// worker container they share (wait.go: waitWorker with a workerWatch
// policy each), publishing, the metrics of
// the records (Metrics), the connection and journal counts, the TIME_WAIT
// sampler, the self-check of the network, and the delivery verdict
// (verdict.go: DeliveryFailures and DeliveryError, ErrDelivery; the matrix
// uses them for its worker cells).
//
// It may import report, results, netmodel, reconcile, internal/*,
// vendormock and worker; never matrix, fault, audit or cmd (they sit above
// it). It reads no environment: the command puts the images, the host
// note and the session label in Config. The Go worker's knobs the lab
// passes through as they are ride in Config.WorkerKnobs, a worker.Config
// every Go worker of a point starts from (internal/lab.WorkerConfig).
//
//	Run ── vendormock.Start (once) ── for each RTT, for each mode:
//	  RunPoint
//	    setNetwork ─> selfCheck ─> ResetJournal ─> access-log offset
//	    publish WARMUP+COUNT (confirms) ─> published.jsonl
//	    kindFor(mode).run ─> records.jsonl (tailed: progress, stall, timeout)
//	    records ─> Metrics ─┐
//	    access log slice ───┼─> CountConnections, CountProtocols ─┐
//	    WireMock journal ───┴─> CountJournalSends, reconcile ─────┴─> results.Result
//	    kind.complete: TIME_WAIT | replicas' metrics check | contract check
//	  results.WriteResult ─> bench-<mode>-<rtt>ms.json
//	report.WriteReport ─> summary.md, charts/
//	Judge (delivery, Config.Thresholds) ─> results.WriteVerdict ─> verdict.json
//	DeliveryFailures ─> DeliveryError: lost, duplicated or not reconciled ─> ErrDelivery (exit 1)
//	ThresholdError: THRESHOLD_P99_MS, THRESHOLD_CONNECTIONS crossed ─> ErrThreshold (exit 1)
//
// Where each number comes from:
//
//   - latency, sends/s, wall time, CPU per send and connection reuse come
//     from the worker's own records (records.Record: httptrace per send,
//     getrusage CPU after each message), measured sends only;
//   - TCP connections and TLS versions come from nginx's access log (the
//     server's truth: distinct $connection values carrying sends, warm-up
//     included, as the case counted);
//   - what reached the vendor comes from WireMock's request journal.
//
// The integration tests (build tag integration) run both modes through
// the real stack.
package bench
