package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/ops"
)

// TestRows_WhatTheCLINeeds: every row with a CLI path carries what its verb
// needs (examples for --help, exit codes from 2 up only, a group
// for a path of two words, a renderer for its result), and no row carries
// CLI documentation without a verb. A failure names the row to complete.
func TestRows_WhatTheCLINeeds(t *testing.T) {
	groups := map[string]bool{}
	for _, g := range ops.Groups() {
		groups[g.Name] = true
		if g.Usage == "" {
			t.Errorf("group %s has no usage (ops.Groups)", g.Name)
		}
	}
	rendered := map[reflect.Type]bool{}
	for _, op := range ops.Table() {
		if op.CLI == "" {
			if len(op.Examples) > 0 || len(op.Exits) > 0 || op.VerbHelp != "" {
				t.Errorf("row %s documents a CLI verb but has no CLI path", op.Name)
			}
			continue
		}
		if len(op.Examples) == 0 {
			t.Errorf("row %s: `synapse %s` has no Examples for its --help", op.Name, op.CLI)
		}
		for code := range op.Exits {
			if code < 2 {
				t.Errorf("row %s: exit %d means the same for every verb; Exits says what 2 and above mean for this one", op.Name, code)
			}
		}
		if words := strings.Fields(op.CLI); len(words) > 1 && !groups[words[0]] {
			t.Errorf("row %s: the group %q of `synapse %s` has no usage in ops.Groups", op.Name, words[0], op.CLI)
		}
		if rendererFor(op) == nil {
			t.Errorf("row %s: `synapse %s` has no renderer for %s (bind one with render.Of in its group's list, e.g. pageRenderers in cmd_page.go)", op.Name, op.CLI, op.Out)
		}
		rendered[op.Out] = true
	}
	for out := range renderers {
		if !rendered[out] {
			t.Errorf("a renderer prints %s, which no verb returns", out)
		}
	}
}
