package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/ops"
)

// Who proposes or decides at the shell: a person typing at a terminal is
// "user" unless they say otherwise; the same command in a pipe or a
// script (an agent) is "agent". The real binary, its standard input a
// pseudo-terminal.
func TestReviewCLI_TerminalMeansUser(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin, v := synapseBinary(t), emptyVault(t)
	_, tty := openPTY(t)
	run := func(atTerminal bool, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--vault", v.Root, "--json")...)
		if atTerminal {
			cmd.Stdin = tty
		}
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("synapse %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
		}
		return out.String()
	}
	add := func(atTerminal bool, title string, more ...string) ops.ReviewItem {
		t.Helper()
		var out ops.AddReviewOut
		if err := json.Unmarshal([]byte(run(atTerminal, append([]string{"review", "add", "--type", "confirm", "--title", title}, more...)...)), &out); err != nil {
			t.Fatal(err)
		}
		return out.Item
	}
	decide := func(atTerminal bool, id string, more ...string) ops.ReviewItem {
		t.Helper()
		var out ops.ResolveReviewOut
		if err := json.Unmarshal([]byte(run(atTerminal, append([]string{"review", "resolve", id, "--action", "resolve"}, more...)...)), &out); err != nil {
			t.Fatal(err)
		}
		return out.ReviewItem
	}
	for _, tc := range []struct {
		name       string
		atTerminal bool
		flags      []string
		want       string
	}{
		{"typed at a terminal", true, nil, ops.OriginUser},
		{"in a pipe", false, nil, ops.OriginAgent},
		{"at a terminal, said agent", true, []string{"agent"}, ops.OriginAgent},
		{"in a pipe, said user", false, []string{"user"}, ops.OriginUser},
	} {
		var origin, by []string
		if tc.flags != nil {
			origin, by = []string{"--origin", tc.flags[0]}, []string{"--by", tc.flags[0]}
		}
		it := add(tc.atTerminal, "Check "+tc.name, origin...)
		if it.Origin != tc.want {
			t.Errorf("%s: review add gave origin %q, want %q", tc.name, it.Origin, tc.want)
		}
		if d := decide(tc.atTerminal, it.ID, by...); d.DecidedBy != tc.want || d.Status != ops.StatusAutoResolved || d.Resolution != "marked resolved" {
			t.Errorf("%s: review resolve gave %s by %q (%s), want by %q", tc.name, d.Status, d.DecidedBy, d.Resolution, tc.want)
		}
	}
}
