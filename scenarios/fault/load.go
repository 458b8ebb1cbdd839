package fault

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Parse reads one scenario from data; file names it in errors and must
// be "<name>.yaml" (its base name is compared with name:). Unknown keys
// are errors (a typo must not pass silently). Errors: *ScenarioError
// values joined, each naming the file and the field.
func Parse(file string, data []byte) (*Scenario, error) {
	var sc Scenario
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&sc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &ScenarioError{File: file, Msg: "empty file"}
		}
		return nil, &ScenarioError{File: file, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	sc.File = file
	sc.applyDefaults()
	if errs := sc.validate(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &sc, nil
}

// Load reads and validates one scenario file.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load scenario: %w", err)
	}
	return Parse(path, data)
}

// LoadCatalog reads every *.yaml file of dir, sorted by name. Errors of
// every file are joined; two files with one name are an error.
func LoadCatalog(dir string) ([]*Scenario, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("load catalog: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("load catalog: no *.yaml file in %s", dir)
	}
	sort.Strings(files)
	var (
		out  []*Scenario
		errs []error
	)
	for _, f := range files {
		sc, err := Load(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, sc)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// Select returns the scenarios named by name: "all" = every one, else
// the one with that name. Errors: an unknown name (the message lists the
// known ones).
func Select(all []*Scenario, name string) ([]*Scenario, error) {
	if name == "all" {
		return all, nil
	}
	for _, sc := range all {
		if sc.Name == name {
			return []*Scenario{sc}, nil
		}
	}
	names := make([]string, len(all))
	for i, sc := range all {
		names[i] = sc.Name
	}
	return nil, fmt.Errorf("unknown scenario %q; known: all, %s", name, strings.Join(names, ", "))
}
