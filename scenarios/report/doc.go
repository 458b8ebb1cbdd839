// Package report turns results into what people read: the Markdown and
// text reporters (summary.md, the terminal), the charts (charts/*.svg),
// the round-trip model's penalties and bulk projections, the studies'
// published figures, and the matrix report. Every function is a pure
// function of results (as vegeta's reporters depend only on Result and
// Metrics), plus Logf, the lab's one log-line format.
//
// It may import results, netmodel, vendormock and worker; never bench,
// matrix, fault, audit, cmd or internal/* (the drivers call it, not the
// other way round).
//
//	OUT/bench-*.json ─> results.ReadResults ─┬─> NewMarkdownReporter ─> summary.md
//	                                         ├─> NewTextReporter ─> terminal
//	                                         └─> WriteCharts, WriteSweepCharts ─> charts/*.svg
//	OUT/cell-*.json ─> results.ReadMatrixCells ─> MatrixMarkdown, MatrixChecks ─> matrix.md, charts/
//
// Reporters are func(io.Writer) error (Reporter), each tested against a
// golden file in testdata/scenarios (the repository's shared test data);
// `go test ./scenarios/report/ -update` rewrites them.
package report
