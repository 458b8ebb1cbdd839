// Package matrix runs the published matrix of docs/studies.md, study A:
// every scheme x driver x client strategy x concurrency at one RTT, one
// stack per scheme, one worker container (1 CPU) per cell, and writes
// OUT/cell-*.json, then the matrix report (report.WriteMatrixReport).
//
// It owns the matrix's Config (the bench's Config, carried, not copied:
// every cell's settings and the worker's knobs, plus the matrix's lists
// of schemes, concurrencies and drivers) and its plan, the direct driver
// (`notifier-worker direct`: the client alone) and the cell's figures
// from records. The worker driver is the bench's path: it calls
// bench.NewBench and Bench.RunPoint, never the bench's internals.
//
// It may import bench, report, results, netmodel, reconcile, internal/*,
// vendormock and worker; never fault, audit or cmd. It reads no
// environment: the command puts the images, the host note and the session
// label in Config.
//
//	Run ── for each scheme: vendormock.Start ─> SetRTT
//	  for each cell (driver, mode, concurrency):
//	    direct: notifier-worker direct ─> records ─┐
//	    worker: bench.RunPoint ─> Result, records ─┼─> results.MatrixCell ─> cell-<name>.json
//	                      nginx access log slice ──┘
//	report.WriteMatrixReport ─> matrix.md, charts/
//	every cell's Check not "ok" ─> bench.DeliveryError ─> ErrDelivery (exit 1)
package matrix
