// Package audit runs the lab's standard battery against one worker under
// test and one vendor profile, and writes the verdict: one line per rule
// with PASS or FAIL and its evidence, as Markdown (audit.md) and as one
// self-contained HTML page with the charts inlined (audit.html).
//
// The battery (Run): the bench at two RTTs (the worker, and for a
// contract worker the Go worker's pooled run beside it), the idle race at
// the profile's keep-alive timeout with the worker's own idle setting, and
// every fault scenario of scenarios/catalog that applies to the worker and
// the profile. The rules (Evaluate) read only the result files, so a
// report can be rebuilt from a results folder (Rebuild).
//
// Which figure comes from where is docs/worker-contract.md's table
// ("Where each figure comes from"): connections and TLS versions from
// nginx's access log, sends per refkey from WireMock's journal, where each
// message ended from the queues, timings and CPU from the worker's records.
package audit
