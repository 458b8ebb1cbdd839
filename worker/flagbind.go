package worker

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// OpsAddrOff as -ops-addr (or OPS_ADDR) serves no /healthz and /metrics:
// BindFlags' Resolve turns it into Config.OpsAddr "". The flag's default
// is DefaultOpsAddr, so a Config whose OpsAddr is "" renders no flag
// (Config.Args) and the command serves on DefaultOpsAddr; set OpsAddrOff
// to turn it off.
const OpsAddrOff = "off"

// DirectCommand is the subcommand that runs RunDirect
// ("notifier-worker direct ...", DirectOptions.Args).
const DirectCommand = "direct"

// setting is one knob of the command line (the table is settings): its
// flag ("" = environment only), its environment fallback ("" = none), its
// help, and how it binds its field of S (Config, or DirectOptions).
type setting[S any] struct {
	flag, env, help string
	// want says what an environment value must look like, for errors.
	want string
	// define binds the field of s to fs under flag, with the field set to
	// the flag's default.
	define func(fs *flag.FlagSet, s *S, usage string)
	// set parses v into the field (environment-only settings).
	set func(s *S, v string) error
	// render returns the field as the flag's value; false when the field
	// holds its zero value (then no flag is rendered).
	render func(s *S) (string, bool)
}

// scalar is a field type the flag package binds itself (its -h then names
// the type as it always did).
type scalar interface {
	string | int | bool | time.Duration
}

// knob is a setting of a string, int, bool or time.Duration field.
func knob[S any, T scalar](name, env string, def T, help string, field func(*S) *T) setting[S] {
	return setting[S]{
		flag: name, env: env, help: help, want: wantOf(def),
		define: func(fs *flag.FlagSet, s *S, usage string) {
			switch p := any(field(s)).(type) {
			case *string:
				fs.StringVar(p, name, any(def).(string), usage)
			case *int:
				fs.IntVar(p, name, any(def).(int), usage)
			case *bool:
				fs.BoolVar(p, name, any(def).(bool), usage)
			case *time.Duration:
				fs.DurationVar(p, name, any(def).(time.Duration), usage)
			}
		},
		render: func(s *S) (string, bool) {
			var zero T
			v := *field(s)
			return fmt.Sprint(v), v != zero
		},
	}
}

// wantOf names the values a field of def's type takes, for errors.
func wantOf(def any) string {
	switch def.(type) {
	case int:
		return "a whole number"
	case bool:
		return "true or false"
	case time.Duration:
		return "a duration, for example 168h"
	}
	return "a string"
}

// inverted is a bool flag that defaults to true and binds a field that
// means its negation (Config.DisableSingleActiveConsumer).
func inverted[S any](name, env, help string, field func(*S) *bool) setting[S] {
	return setting[S]{
		flag: name, env: env, help: help, want: "true or false",
		define: func(fs *flag.FlagSet, s *S, usage string) {
			*field(s) = false
			fs.Var(notBool{field(s)}, name, usage)
		},
		render: func(s *S) (string, bool) { return strconv.FormatBool(!*field(s)), *field(s) },
	}
}

// notBool is a bool flag.Value stored negated.
type notBool struct{ p *bool }

func (v notBool) String() string {
	if v.p == nil {
		return "false"
	}
	return strconv.FormatBool(!*v.p)
}

func (v notBool) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	*v.p = !b
	return nil
}

func (notBool) IsBoolFlag() bool { return true }

// instant is a time.Time flag in RFC 3339; its default is the zero time
// (no flag).
func instant[S any](name, env, help string, field func(*S) *time.Time) setting[S] {
	return setting[S]{
		flag: name, env: env, help: help, want: "an RFC 3339 time",
		define: func(fs *flag.FlagSet, s *S, usage string) {
			*field(s) = time.Time{}
			fs.Var(timeValue{field(s)}, name, usage)
		},
		render: func(s *S) (string, bool) {
			t := *field(s)
			return t.Format(time.RFC3339Nano), !t.IsZero()
		},
	}
}

// timeValue is a time.Time flag.Value in RFC 3339; "" is the zero time.
type timeValue struct{ p *time.Time }

func (v timeValue) String() string {
	if v.p == nil || v.p.IsZero() {
		return ""
	}
	return v.p.Format(time.RFC3339Nano)
}

func (v timeValue) Set(s string) error {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("want RFC 3339, like 2026-11-30T20:49:50+09:00")
	}
	*v.p = t
	return nil
}

// secret is a string read only from the environment variable env: it has
// no flag, and Args never renders it.
func secret[S any](env string, field func(*S) *string) setting[S] {
	return setting[S]{
		env: env, want: "a string",
		set:    func(s *S, v string) error { *field(s) = v; return nil },
		render: func(*S) (string, bool) { return "", false },
	}
}

// usage is the setting's help with its environment variable.
func (st setting[S]) usage() string {
	if st.env == "" {
		return st.help
	}
	return st.help + " [env " + st.env + "]"
}

// Flags is the command line's settings bound to a flag set and a Config
// (BindFlags).
type Flags struct {
	fs  *flag.FlagSet
	c   *Config
	set []setting[Config]
}

// BindFlags defines the notifier-worker flags on fs, bound to c's fields,
// and sets those fields to the flags' defaults. With names, only those
// flags are defined (a subcommand that takes a few, like "ledger"); the
// environment-only settings (VENDOR_CLIENT_SECRET) come only with all. The
// flag names, environment variables and defaults are listed by -h and in
// README.md. After fs.Parse, call Resolve.
func BindFlags(fs *flag.FlagSet, c *Config, names ...string) *Flags {
	f := &Flags{fs: fs, c: c}
	for _, st := range settings {
		if len(names) > 0 && !slices.Contains(names, st.flag) {
			continue
		}
		f.set = append(f.set, st)
		if st.flag != "" {
			st.define(fs, c, st.usage())
		}
	}
	return f
}

// Resolve applies, after fs.Parse, the environment fallbacks: each bound
// setting whose flag was not on the command line takes its variable from
// getenv when that is set and not empty, parsed as the flag would be.
// Then OpsAddrOff becomes "". It does not apply Config.WithDefaults. Errors
// (joined): each variable whose value does not parse, named with the
// value and what it must look like.
func (f *Flags) Resolve(getenv func(string) string) error {
	given := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	var errs []error
	for _, st := range f.set {
		v := ""
		if st.env != "" && !given[st.flag] {
			v = getenv(st.env)
		}
		if v == "" {
			continue
		}
		var err error
		if st.flag == "" {
			err = st.set(f.c, v)
		} else {
			err = f.fs.Set(st.flag, v)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("environment %s %q: want %s", st.env, v, st.want))
		}
	}
	if f.c.OpsAddr == OpsAddrOff {
		f.c.OpsAddr = ""
	}
	return errors.Join(errs...)
}

// Args returns c as the notifier-worker command line, the inverse of
// BindFlags: one "-flag=value" for every field that holds a value other
// than its zero value, in a fixed order. A zero field gives no flag, so the
// command's default or its environment fallback applies (Config's zero
// values mean the defaults, except OpsAddr: see OpsAddrOff). The client
// secret is never rendered (it is read only from the environment), nor are
// the fields without a flag (ReconnectMin, Heartbeat, Logger). The lab
// builds a Config and passes Args to a worker container.
func (c Config) Args() []string { return render(settings, &c, false) }

// Args returns the direct subcommand's command line for c:
// DirectCommand, a flag for each of o's fields (all of them: a zero
// Warmup means none, while the flag's default is 50), then c.Args().
func (o DirectOptions) Args(c Config) []string {
	return append(append([]string{DirectCommand}, render(directSettings, &o, true)...), c.Args()...)
}

// BindDirectFlags defines the direct subcommand's own flags (-count,
// -warmup, -refkey-prefix) on fs, bound to o, with their defaults.
func BindDirectFlags(fs *flag.FlagSet, o *DirectOptions) {
	for _, st := range directSettings {
		st.define(fs, o, st.usage())
	}
}

// render returns the "-flag=value" of every setting of set whose field in
// s is not zero (with all, of every setting), in set's order.
func render[S any](set []setting[S], s *S, all bool) []string {
	var args []string
	for _, st := range set {
		if v, ok := st.render(s); (ok || all) && st.flag != "" {
			args = append(args, "-"+st.flag+"="+v)
		}
	}
	return args
}
