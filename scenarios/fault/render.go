package fault

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RenderPages re-renders, offline, the fault and idle-race pages of a
// result folder from their JSON (`lab report`): faults.md from
// faults.json (and its section of summary.md, when there is one), NAME.md
// from each idle race's NAME.json (idle-race*.json, audit-idle-race.json), so pages written before a renderer changed (the
// provenance header) read like new ones. A faults-not-applicable.json of
// the older shape (a bare list) is rewritten as a NotApplicableList with
// the provenance of the same run's faults.json, when that has one. It
// returns the files written (none: the folder holds neither). Errors: a
// file that does not parse, or a write.
func RenderPages(out string) ([]string, error) {
	var wrote []string
	raw, err := os.ReadFile(filepath.Join(out, "faults.json"))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		var f FaultsFile
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, fmt.Errorf("parse %s: %w", filepath.Join(out, "faults.json"), err)
		}
		if err := writeFaultsPage(out, f.Faults, f.Provenance); err != nil {
			return nil, err
		}
		wrote = append(wrote, filepath.Join(out, "faults.md"))
		if _, err := os.Stat(filepath.Join(out, "summary.md")); err == nil {
			if err := appendSection(filepath.Join(out, "summary.md"), "faults", faultsSection(f.Faults), f.Provenance); err != nil {
				return nil, err
			}
			wrote = append(wrote, filepath.Join(out, "summary.md"))
		}
		if ok, err := upgradeNotApplicable(out, f); err != nil {
			return nil, err
		} else if ok {
			wrote = append(wrote, filepath.Join(out, NotApplicableFile))
		}
	}
	races, err := filepath.Glob(filepath.Join(out, "*idle-race*.json"))
	if err != nil {
		return nil, err
	}
	for _, path := range races {
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var res IdleRaceResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("parse %s: %w", path, err)
		}
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		md := filepath.Join(out, name+".md")
		if err := os.WriteFile(md, []byte(idleRacePage(name, res)), 0o644); err != nil {
			return nil, fmt.Errorf("write %s: %w", md, err)
		}
		wrote = append(wrote, md)
	}
	return wrote, nil
}

// upgradeNotApplicable rewrites a bare-list NotApplicableFile as a
// NotApplicableList carrying f's provenance (the run that wrote both);
// false when there is nothing to upgrade (no file, the new shape already,
// or f has no provenance).
func upgradeNotApplicable(out string, f FaultsFile) (bool, error) {
	raw, err := os.ReadFile(filepath.Join(out, NotApplicableFile))
	if errors.Is(err, os.ErrNotExist) || f.Provenance == nil {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var list []NotApplicable
	if json.Unmarshal(raw, &list) != nil {
		return false, nil // the new shape, or not ours to rewrite
	}
	return true, writeNotApplicable(out, list, f.Provenance)
}
