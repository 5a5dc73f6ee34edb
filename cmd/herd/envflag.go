package main

import (
	"errors"
	"flag"
	"fmt"
	"time"
)

// envFlags is a flag set whose flags each have a HERD_* environment
// mirror: a flag given on the command line wins, else its variable, else
// the flag's static default. Defaults stay static so that -h never prints
// a value read from the environment (a token, a database password), and
// an environment value is never quoted in an error, in case a secret
// landed in the wrong variable.
type envFlags struct {
	*flag.FlagSet
	mirrors []envMirror // in definition order, so errors come in a stable order
}

// envMirror names the environment variable of one flag.
type envMirror struct{ flag, env string }

func newEnvFlags(name string) *envFlags {
	return &envFlags{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError)}
}

// stringVar defines a string flag mirrored by env.
func (f *envFlags) stringVar(p *string, name, env, def, usage string) {
	f.StringVar(p, name, def, f.mirror(name, env, usage))
}

// boolVar defines a bool flag mirrored by env.
func (f *envFlags) boolVar(p *bool, name, env string, def bool, usage string) {
	f.BoolVar(p, name, def, f.mirror(name, env, usage))
}

// intVar defines an int flag mirrored by env.
func (f *envFlags) intVar(p *int, name, env string, def int, usage string) {
	f.IntVar(p, name, def, f.mirror(name, env, usage))
}

// durationVar defines a duration flag mirrored by env.
func (f *envFlags) durationVar(p *time.Duration, name, env string, def time.Duration, usage string) {
	f.DurationVar(p, name, def, f.mirror(name, env, usage))
}

// mirror records env as name's variable and returns the usage naming it.
func (f *envFlags) mirror(name, env, usage string) string {
	f.mirrors = append(f.mirrors, envMirror{flag: name, env: env})
	return usage + " (" + env + ")"
}

// parse parses args, then sets each flag not given there from its
// variable through lookup (os.LookupEnv outside tests). An empty variable
// counts as unset, as `HERD_TOKEN=${HERD_TOKEN}` in a compose file gives.
func (f *envFlags) parse(args []string, lookup func(string) (string, bool)) error {
	if err := f.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	var errs []error
	for _, m := range f.mirrors {
		v, ok := lookup(m.env)
		if given[m.flag] || !ok || v == "" {
			continue
		}
		if err := f.Set(m.flag, v); err != nil {
			errs = append(errs, fmt.Errorf("%s (as --%s) is not %s", m.env, m.flag, expected(f.Lookup(m.flag))))
		}
	}
	return errors.Join(errs...)
}

// expected describes the form of a flag's value, for errors that do not
// quote the value.
func expected(fl *flag.Flag) string {
	switch fl.Value.(flag.Getter).Get().(type) {
	case bool:
		return "true or false"
	case int:
		return "a whole number"
	case time.Duration:
		return "a duration such as 30s or 2m"
	}
	return "a valid value"
}
