// Package results is the lab's result schema: a bench point's Result
// (OUT/bench-<mode>-<rtt>ms[transport].json), its check types
// (MetricsCheck, ContractCheck, TimeWait), a matrix cell (MatrixCell,
// OUT/cell-<name>.json), the transport a run used (Transport), the
// provenance every result file carries (Provenance), what became of a
// run's UNKNOWN sends (Settlement, MeasureSettlement; also used by the
// fault and idle-race files), a bench run's verdict (Verdict,
// OUT/verdict.json), the file names, reading (the
// newest run's files only: ReadRun), writing and sorting. The JSON keys are a contract that
// other tools read: keep them, add freely.
//
// It depends on nothing of the driver: it may import reconcile (the
// verdict a Result carries), vendormock (schemes) and worker (outcomes,
// strategy names, the ledger's settlement sources, records), never bench, matrix, report, fault, audit, cmd or
// internal/*.
//
//	bench, matrix ──(fill)──> Result, MatrixCell ──WriteResult, WriteMatrixCell──> OUT/*.json
//	OUT/*.json ──ReadResults, ReadMatrixCells──> report, audit
package results
