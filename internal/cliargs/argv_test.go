package cliargs

import (
	"slices"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestPermute: a verb's flags move ahead of its arguments; a value flag
// typed last with no value stays last, so that the parser reports it
// instead of taking the "--" before the arguments as its value.
func TestPermute(t *testing.T) {
	app := &cli.App{
		Flags: []cli.Flag{&cli.StringFlag{Name: "vault"}},
		Commands: []*cli.Command{{Name: "search", Flags: []cli.Flag{
			&cli.IntFlag{Name: "k", Aliases: []string{"n"}}, &cli.BoolFlag{Name: "json"}}}},
	}
	for _, c := range []struct{ in, want []string }{
		{[]string{"synapse", "search", "foo", "-k", "3"}, []string{"synapse", "search", "-k", "3", "--", "foo"}},
		{[]string{"synapse", "search", "foo", "--json", "bar"}, []string{"synapse", "search", "--json", "--", "foo", "bar"}},
		{[]string{"synapse", "search", "foo", "-k"}, []string{"synapse", "search", "-k"}},
		{[]string{"synapse", "search", "foo", "--json", "-k"}, []string{"synapse", "search", "--json", "-k"}},
		{[]string{"synapse", "--vault", "v", "search", "foo"}, []string{"synapse", "--vault", "v", "search", "--", "foo"}},
		{[]string{"synapse", "search", "--", "-k"}, []string{"synapse", "search", "--", "-k"}},
	} {
		if got := Permute(app, c.in); !slices.Equal(got, c.want) {
			t.Errorf("Permute(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
