package search_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestEvalDump writes the evaluation's heading queries of the Obsidian Help
// vaults (en, es, it, ru) as SET\tQUERY\tTARGET lines to the file named by
// SEARCH_EVAL_DUMP, so that scripts/eval-cli can run the same queries
// through any synapse binary (the pre-round one included) and compare
// MRR@10 at the CLI. Without the variable it does nothing.
func TestEvalDump(t *testing.T) {
	out := os.Getenv("SEARCH_EVAL_DUMP")
	if out == "" {
		t.Skip("set SEARCH_EVAL_DUMP=FILE to write the heading queries")
	}
	var b strings.Builder
	for _, set := range evalSets() {
		if !strings.HasPrefix(set.name, "obsidian-help") {
			continue
		}
		for _, h := range loadEval(t, set.dir).headings {
			fmt.Fprintf(&b, "%s\t%s\t%s\n", set.name, h.query, strings.TrimPrefix(h.target, "wiki/"))
		}
	}
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
