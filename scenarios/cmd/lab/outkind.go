package main

import (
	"fmt"
	"path/filepath"
)

// resultKind is one command's result files, by which a folder is known
// as that command's.
type resultKind struct{ pattern, command string }

var (
	benchKind  = resultKind{"bench-*.json", "bench (./run.sh)"}
	scaleKind  = resultKind{"point-*.json", "scale"}
	matrixKind = resultKind{"cell-*.json", "matrix"}
	auditKind  = resultKind{"audit.json", "audit"}
	simKind    = resultKind{"summary.json", "simulate"}
	pageKind   = resultKind{"pageload.json", "pageload"}
)

// foreignKinds are, per command, the other commands' results it refuses
// to write beside: its summary would replace theirs, or a report would
// read the folder as theirs (a fresh-user trial's bench into a copy of
// results/scale replaced its summary).
var foreignKinds = map[command][]resultKind{
	cmdRun:    {scaleKind, matrixKind, simKind, pageKind, defaultsKind},
	cmdMatrix: {benchKind, scaleKind, auditKind, simKind, pageKind, defaultsKind},
	cmdScale:  {benchKind, matrixKind, auditKind, simKind, pageKind, defaultsKind},
}

// pageloadForeignKinds are the results ./run.sh pageload refuses to write
// beside: each of them has a summary.md of its own.
var pageloadForeignKinds = []resultKind{benchKind, scaleKind, matrixKind, auditKind, simKind}

// simForeignKinds are the results ./run.sh simulate refuses to write
// beside: each of them has a summary.md of its own.
var simForeignKinds = []resultKind{benchKind, scaleKind, matrixKind, auditKind, pageKind, defaultsKind}

// checkOutKind refuses dir when it holds any of kinds' result files.
func checkOutKind(dir string, kinds []resultKind) error {
	for _, k := range kinds {
		if m, _ := filepath.Glob(filepath.Join(dir, k.pattern)); len(m) > 0 {
			return fmt.Errorf("OUT %s holds another command's results (%s: a %s run's); this command would write its own summary beside them: name a new folder", dir, filepath.Base(m[0]), k.command)
		}
	}
	return nil
}
