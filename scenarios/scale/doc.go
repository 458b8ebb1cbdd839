// Package scale runs the scale benchmark of issue 17 (`./run.sh scale`,
// docs/running.md#the-scale-benchmark): sends/s, p50/p99 and CPU per send
// against concurrency and active workers at a vendor think time long
// enough that the vendor, not this machine, bounds one worker, plus a
// series at the case's think time and a long run that samples the
// worker's memory. Beside each run it samples every container's CPU from
// its cgroup, so the summary names what saturates, and it runs the bare
// client (`notifier-worker direct`) at the same settings.
//
// It owns the scale's Config (the matrix's Config, which carries the
// bench's, plus its own lists), its plan and count model, the cgroup
// sampler and the report (OUT/point-*.json, OUT/summary.md, OUT/charts/).
// Worker points are the bench's path (bench.NewBench, Bench.RunPoint) on
// competing replicas with the shared PostgreSQL ledger; direct points are
// the matrix's direct driver (matrix.DirectCell).
//
// It may import bench, matrix, report, results, netmodel, internal/*,
// vendormock and worker; never fault, audit or cmd. It reads no
// environment: the command puts the images, the host note and the session
// label in Config.
//
//	Run ── vendormock.Start (one stack) ─> SetRTT
//	  for each point of the plan (think time, concurrency, driver, workers):
//	    sampler (cgroup CPU of every container, worker RSS) ─┐
//	    worker: bench.RunPoint ─> Result                    ├─> Point ─> point-<name>.json
//	    direct: matrix.DirectCell ─> MatrixCell             ┘
//	WriteReport ─> summary.md, charts/
//	a point lost or duplicated a message ─> bench.DeliveryError (exit 1)
package scale
