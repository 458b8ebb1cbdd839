package main

import (
	"fmt"
	"slices"
	"strings"
)

// ownKey is one key of a command that keeps its own key table instead of
// the lab's (keys.go): simulate and pageload, which start no vendor stack
// and share only OUT with the other commands. The conventions are the
// lab's: a help line, what is allowed, the default as a word writes it,
// and how a value is applied to the command's config C.
type ownKey[C any] struct {
	name, help, allowed, show string
	set                       func(c *C, v string) error
}

// ownKeyNames are the names of keys, in order.
func ownKeyNames[C any](keys []ownKey[C]) []string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.name
	}
	return names
}

// parseOwnWords applies keys to cfg from KEY=VALUE words, then the
// environment for keys no word set (a word wins; an empty variable is
// unset; values are trimmed), as parseWords does for the lab's table. It
// returns where each applied key came from ("argument" or
// "environment"), or a *UsageError: a word without '=', a key of another
// command (naming it), an unknown key (naming a likely misspelling and
// cmd's keys), an invalid value (naming what is allowed). cmd is the
// command as the user types it ("./run.sh simulate").
func parseOwnWords[C any](cmd string, keys []ownKey[C], cfg *C, args []string, getenv func(string) string) (map[string]string, error) {
	names := ownKeyNames(keys)
	known := strings.Join(names, ", ")
	words := map[string]string{}
	for _, a := range args {
		name, value, ok := strings.Cut(a, "=")
		if !ok {
			return nil, &UsageError{Value: a, Source: "argument", Msg: "want KEY=VALUE with KEY one of " + known}
		}
		if !slices.Contains(names, name) {
			msg := "unknown key; known keys: " + known
			if k, other := lookup(0, name); other {
				msg = fmt.Sprintf("a key of lab %s, not of %s; known keys: %s", k.in.name(), cmd, known)
			} else if near := nearestKey(name, names); near != "" {
				msg = "unknown key; did you mean " + near + "? known keys: " + known
			}
			return nil, &UsageError{Key: name, Value: value, Source: "argument", Msg: msg}
		}
		words[name] = value
	}
	sources := map[string]string{}
	for _, k := range keys {
		value, source := words[k.name], "argument"
		if _, inWords := words[k.name]; !inWords {
			if getenv == nil || getenv(k.name) == "" {
				continue
			}
			value, source = getenv(k.name), "environment"
		}
		if err := k.set(cfg, strings.TrimSpace(value)); err != nil {
			return nil, &UsageError{Key: k.name, Value: value, Source: source, Msg: err.Error() + "; allowed: " + k.allowed}
		}
		sources[k.name] = source
	}
	return sources, nil
}

// writeOwnKeys writes keys as usage lines: NAME=default, its help, what
// it allows.
func writeOwnKeys[C any](b *strings.Builder, keys []ownKey[C]) {
	for _, k := range keys {
		fmt.Fprintf(b, "  %s=%s\n      %s.\n      Allowed: %s.\n", k.name, k.show, k.help, k.allowed)
	}
}
