package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/notifier-lab/notifier-lab/scenarios/bench"
	"github.com/notifier-lab/notifier-lab/scenarios/defaults"
	"github.com/notifier-lab/notifier-lab/scenarios/internal/outdir"
)

// defaultsHelp follows usage in `lab help`.
const defaultsHelp = `
Client defaults (./run.sh client-defaults [RTT=ms] [CALLS=n] [CLIENTS=...] [OUT=dir]):
real HTTP clients at their defaults (Node fetch and https, curl, Python requests,
Go http.Post) each POST CALLS messages one after another through Toxiproxy at
the RTT, then a few send 50 with 10 in flight; nginx counts the connections;
writes OUT/client-defaults.json, summary.md and a chart (./run.sh
client-defaults help lists its keys).
`

// defaultsKind is client-defaults' result file, by which a folder is
// known as its.
var defaultsKind = resultKind{defaults.ResultFile, "client-defaults"}

// defaultsForeignKinds are the results client-defaults refuses to write
// beside: each has a summary.md of its own.
var defaultsForeignKinds = []resultKind{benchKind, scaleKind, matrixKind, auditKind, simKind}

// defaultsKey is one key of ./run.sh client-defaults, with simulate's
// conventions (simkeys.go): its own small table, since it starts its own
// stack and shares only OUT with the other commands.
type defaultsKey struct {
	name, help, allowed, show string
	set                       func(c *defaults.Config, v string) error
}

var defaultsKeys = []defaultsKey{
	{name: "RTT", help: "round trip Toxiproxy adds between the clients and nginx, ms, with the TCP handshake toxic on (study B: 50 ms for the client defaults)",
		allowed: fmt.Sprintf("a whole number 1..%d", defaults.MaxRTTMS), show: strconv.Itoa(defaults.DefaultRTTMS),
		set: func(c *defaults.Config, v string) (err error) {
			c.RTTMS, err = parseInt(v, 1, defaults.MaxRTTMS)
			return
		}},
	{name: "CALLS", help: "sequential calls per client (study B: 200; its curl figures are for 20)",
		allowed: fmt.Sprintf("a whole number 1..%d", defaults.MaxCalls), show: strconv.Itoa(defaults.DefaultCalls),
		set: func(c *defaults.Config, v string) (err error) {
			c.Calls, err = parseInt(v, 1, defaults.MaxCalls)
			return
		}},
	{name: "CLIENTS", help: "the clients to run, in the tables' order whatever the order given",
		allowed: "one or more of " + strings.Join(defaults.ClientNames(), ", ") + ", separated by spaces or commas", show: "all",
		set: func(c *defaults.Config, v string) error {
			names := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
			if len(names) == 0 {
				return fmt.Errorf("empty list")
			}
			for _, n := range names {
				if !slices.Contains(defaults.ClientNames(), n) {
					return fmt.Errorf("unknown client %q", n)
				}
			}
			c.Clients = names
			return nil
		}},
	{name: "OUT", help: "results folder; without it a new folder " + outdir.RunsDir + "/<run id>/ (" + defaults.DefaultOut + " is the committed one)",
		allowed: "a new or empty folder, or one an earlier run made (it carries " + outdir.Marker + "), holding no other command's results",
		show:    "<" + outdir.RunsDir + "/<run id>>",
		set: func(c *defaults.Config, v string) error {
			if strings.TrimSpace(v) == "" {
				return fmt.Errorf("empty path")
			}
			c.Out = v
			return nil
		}},
}

func defaultsKeyNames() []string {
	names := make([]string, len(defaultsKeys))
	for i, k := range defaultsKeys {
		names[i] = k.name
	}
	return names
}

// parseDefaultsArgs builds client-defaults' config from KEY=VALUE words,
// then the environment for keys no word set (a word wins). Errors are
// *UsageError (exit 2, nothing started): a word without '=', an unknown
// key (with a likely misspelling), an invalid value (naming what is
// allowed), an OUT the lab did not make or that holds another command's
// results.
func parseDefaultsArgs(args []string, getenv func(string) string) (defaults.Config, error) {
	cfg := defaults.DefaultConfig()
	known := strings.Join(defaultsKeyNames(), ", ")
	words := map[string]string{}
	for _, a := range args {
		name, value, ok := strings.Cut(a, "=")
		if !ok {
			return cfg, &UsageError{Value: a, Source: "argument", Msg: "want KEY=VALUE with KEY one of " + known}
		}
		if !slices.Contains(defaultsKeyNames(), name) {
			msg := "unknown key; known keys: " + known
			if near := nearestKey(name, defaultsKeyNames()); near != "" {
				msg = "unknown key; did you mean " + near + "? known keys: " + known
			}
			return cfg, &UsageError{Key: name, Value: value, Source: "argument", Msg: msg}
		}
		words[name] = value
	}
	outSrc := ""
	for _, k := range defaultsKeys {
		value, source := words[k.name], "argument"
		if _, inWords := words[k.name]; !inWords {
			if getenv == nil || getenv(k.name) == "" {
				continue
			}
			value, source = getenv(k.name), "environment"
		}
		if err := k.set(&cfg, strings.TrimSpace(value)); err != nil {
			return cfg, &UsageError{Key: k.name, Value: value, Source: source, Msg: err.Error() + "; allowed: " + k.allowed}
		}
		if k.name == "OUT" {
			outSrc = source
		}
	}
	if outSrc != "" {
		if err := outdir.Check(cfg.Out); err != nil {
			return cfg, &UsageError{Key: "OUT", Value: cfg.Out, Source: outSrc, Msg: err.Error()}
		}
		if err := checkOutKind(cfg.Out, defaultsForeignKinds); err != nil {
			return cfg, &UsageError{Key: "OUT", Value: cfg.Out, Source: outSrc, Msg: err.Error()}
		}
	}
	return cfg, nil
}

// defaultsUsage is `./run.sh client-defaults help`.
func defaultsUsage(w io.Writer) error {
	var b strings.Builder
	b.WriteString(strings.TrimPrefix(defaultsHelp, "\n"))
	b.WriteString("\nExit 0 done, 1 the run failed, 2 a bad argument (nothing started), 130 interrupted.\nEvery key can also be set in the environment; a word wins.\n\nKeys, each shown with its default:\n")
	for _, k := range defaultsKeys {
		fmt.Fprintf(&b, "  %s=%s\n      %s.\n      Allowed: %s.\n", k.name, k.show, k.help, k.allowed)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// runDefaults is `lab client-defaults`: the keys, the images and session
// from the environment, the provenance, then defaults.Run.
func runDefaults(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := parseDefaultsArgs(args, getenv)
	if err != nil {
		return err
	}
	var env bench.Config
	if err := labEnvironment(&env, getenv); err != nil {
		return err
	}
	cfg.Images, cfg.Session, cfg.ClientsImage = env.Images, env.Session, getenv(defaults.EnvImageClients)
	cfg.Provenance = newProvenance(time.Now(), "client-defaults", args, defaultsKeyNames(), getenv, cfg.Images)
	perRun := !given(args, getenv, "OUT")
	if perRun {
		cfg.Out, cfg.Provenance.RunID = outdir.NewRunDir(cfg.Provenance.RunID)
		announceRunDir(stdout, cfg.Out)
	}
	return finishRun(stdout, perRun, cfg.Out, cfg.Provenance.RunID, defaults.Run(ctx, cfg, stdout))
}
