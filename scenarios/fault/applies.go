package fault

import (
	"encoding/json"
	"fmt"
	"github.com/notifier-lab/notifier-lab/scenarios/results"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/notifier-lab/notifier-lab/vendormock"
)

// WorkerContract is the applies_to.workers entry that names every worker
// but Go's: the workers configured by docs/worker-contract.md alone.
const WorkerContract = "contract"

// AppliesTo says which workers under test and vendor profiles a scenario
// applies to; an empty list means all. A scenario with a workers section
// (replicas, a shared ledger, single active consumer) applies to the Go
// worker only whatever it says: the reference workers run as one replica
// on a local ledger file (docs/worker-contract.md#what-the-reference-workers-do-not-do);
// so does one with client.concurrency above 1 (the contract's prefetch is 1).
type AppliesTo struct {
	// Workers are WORKER values (vendormock.WorkerNames without
	// "image:NAME") or WorkerContract, e.g. [go].
	Workers []string `yaml:"workers"`
	// Profiles are vendor profile names (the profile's name key), e.g.
	// [alimtalk] for a scenario whose stubs or refkeys only that profile
	// answers.
	Profiles []string `yaml:"profiles"`
	// ConnectionReuse marks a scenario whose fault is set up on a
	// connection kept from an earlier send: it does not apply to a worker
	// known to open a new connection per send (NoConnectionReuse).
	ConnectionReuse bool `yaml:"connection_reuse"`
}

// NoConnectionReuse are the workers that open a new connection for every
// send, by design or by their library's default
// (docs/worker-contract.md#implementations).
var NoConnectionReuse = []string{"node-agent-nokeepalive", "java-per-send", "python-requests", "node-axios", "node-got"}

var profileNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)

// check validates the applies_to section.
func (a AppliesTo) check(bad func(string, string, ...any)) {
	known := append(slices.DeleteFunc(vendormock.WorkerNames(), func(n string) bool {
		return strings.HasPrefix(n, vendormock.WorkerImagePrefix)
	}), WorkerContract)
	for i, w := range a.Workers {
		if !slices.Contains(known, w) {
			bad(fmt.Sprintf("applies_to.workers[%d]", i), "%q: want one of %s", w, strings.Join(known, ", "))
		}
	}
	for i, p := range a.Profiles {
		if !profileNameRE.MatchString(p) {
			bad(fmt.Sprintf("applies_to.profiles[%d]", i), "%q: want a profile name (a-z, 0-9, '-')", p)
		}
	}
}

// Applies reports whether sc applies to the worker under test (a WORKER
// value, "" = go) and the vendor profile (its name, "" = any), and when
// not, why, in a sentence.
func (sc *Scenario) Applies(worker, profile string) (bool, string) {
	if worker == "" {
		worker = vendormock.WorkerGo
	}
	contract := worker != vendormock.WorkerGo
	if contract && sc.Workers != nil {
		return false, "runs on worker replicas (workers section): the Go worker only"
	}
	if contract && sc.Client.Concurrency > 1 {
		return false, fmt.Sprintf("runs %d messages at once (client.concurrency): the contract's prefetch is 1", sc.Client.Concurrency)
	}
	if contract && sc.Client.HTTPVersion == "2" {
		return false, "offers HTTP/2 (client.http_version 2): the contract has no HTTP version setting"
	}
	if contract && sc.Client.UnsafeAllowTransportReplay {
		return false, "turns the Go worker's transport replay on (client.unsafe_allow_transport_replay): the Go worker only"
	}
	if ws := sc.AppliesTo.Workers; len(ws) > 0 && !slices.Contains(ws, worker) && !(contract && slices.Contains(ws, WorkerContract)) {
		return false, "applies to workers " + strings.Join(ws, ", ")
	}
	if sc.AppliesTo.ConnectionReuse && slices.Contains(NoConnectionReuse, worker) {
		return false, "its fault sits on a reused connection; this worker opens a new connection per send"
	}
	if ps := sc.AppliesTo.Profiles; profile != "" && len(ps) > 0 && !slices.Contains(ps, profile) {
		return false, "applies to profiles " + strings.Join(ps, ", ")
	}
	return true, ""
}

// NotApplicable is one scenario a run left out: its name and why.
type NotApplicable struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// NotApplicableFile is the file Run writes under OUT with the scenarios it
// left out for the worker and profile: a NotApplicableList (files written
// before it had provenance hold the bare JSON list, which
// ReadNotApplicable still reads).
const NotApplicableFile = "faults-not-applicable.json"

// NotApplicableList is NotApplicableFile's content: the writing run's
// provenance and the scenarios it left out ("scenarios", an empty list
// too, so a reader tells "none left out" from "not run").
type NotApplicableList struct {
	Provenance *results.Provenance `json:"provenance,omitempty"`
	Scenarios  []NotApplicable     `json:"scenarios"`
}

// writeNotApplicable writes OUT/NotApplicableFile with prov (nil: none).
func writeNotApplicable(out string, na []NotApplicable, prov *results.Provenance) error {
	if na == nil {
		na = []NotApplicable{}
	}
	b, err := json.MarshalIndent(NotApplicableList{Provenance: prov, Scenarios: na}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode not applicable: %w", err)
	}
	if err := os.WriteFile(filepath.Join(out, NotApplicableFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write not applicable: %w", err)
	}
	return nil
}

// ReadNotApplicable reads OUT/NotApplicableFile: a NotApplicableList, or
// the bare list of older files. Errors: the file's, or one naming it when
// it does not parse as either.
func ReadNotApplicable(out string) ([]NotApplicable, error) {
	b, err := os.ReadFile(filepath.Join(out, NotApplicableFile))
	if err != nil {
		return nil, fmt.Errorf("read not applicable: %w", err)
	}
	var l NotApplicableList
	if err := json.Unmarshal(b, &l); err == nil && l.Scenarios != nil {
		return l.Scenarios, nil
	}
	var na []NotApplicable
	if err := json.Unmarshal(b, &na); err != nil {
		return nil, fmt.Errorf("parse %s: want {\"scenarios\": [...]} or a list: %w", NotApplicableFile, err)
	}
	return na, nil
}
