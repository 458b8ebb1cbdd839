// Package sim is a deterministic simulator of the worker: the real
// handler, ledgers, report resolver and sweeper, unknown drain, send window
// and vendor client run against models of the broker, the vendor, the
// clock and process crashes, driven by a fault schedule generated from a
// seed; a checker judges every step (docs/testing.md, Deterministic
// simulation).
package sim
