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

// Catalog is a catalog folder read file by file: the scenarios that
// loaded, in file name order, and the files that did not.
type Catalog struct {
	Scenarios []*Scenario
	Broken    []BrokenFile
}

// BrokenFile is a catalog file that did not load; Err names the file and
// the field (*ScenarioError values joined).
type BrokenFile struct {
	File string // path as read
	Err  error
}

// ReadCatalog reads every *.yaml file of dir, sorted by name. A file that
// does not load is kept in Broken and the others still load. Errors: dir
// cannot be listed or holds no *.yaml file.
func ReadCatalog(dir string) (Catalog, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return Catalog{}, fmt.Errorf("load catalog: %w", err)
	}
	if len(files) == 0 {
		return Catalog{}, fmt.Errorf("load catalog: no *.yaml file in %s", dir)
	}
	sort.Strings(files)
	var c Catalog
	for _, f := range files {
		sc, err := Load(f)
		if err != nil {
			c.Broken = append(c.Broken, BrokenFile{File: f, Err: err})
			continue
		}
		c.Scenarios = append(c.Scenarios, sc)
	}
	return c, nil
}

// Err returns every broken file's errors joined, nil when none is broken.
func (c Catalog) Err() error {
	var errs []error
	for _, b := range c.Broken {
		errs = append(errs, b.Err)
	}
	return errors.Join(errs...)
}

// Select returns the scenarios named by name (see Select). A broken file
// stops only what needs it: "all", or the scenario of that file name (the
// error is the file's, naming the field). A valid scenario asked for by
// name runs whatever else is broken. An unknown name's error lists the
// known names and the broken files.
func (c Catalog) Select(name string) ([]*Scenario, error) {
	if name == "all" && len(c.Broken) > 0 {
		return nil, fmt.Errorf("select all: %d catalog file(s) do not load: %w", len(c.Broken), c.Err())
	}
	for _, b := range c.Broken {
		if strings.TrimSuffix(filepath.Base(b.File), ".yaml") == name {
			return nil, fmt.Errorf("select %s: %w", name, b.Err)
		}
	}
	sel, err := Select(c.Scenarios, name)
	if err != nil && len(c.Broken) > 0 {
		return nil, fmt.Errorf("%w; files that do not load: %w", err, c.Err())
	}
	return sel, err
}

// LoadCatalog reads every *.yaml file of dir, sorted by name, and fails on
// any file that does not load (`./run.sh list`, tests): the errors of
// every broken file are joined, each naming the file and the field.
func LoadCatalog(dir string) ([]*Scenario, error) {
	c, err := ReadCatalog(dir)
	if err != nil {
		return nil, err
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	return c.Scenarios, nil
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
