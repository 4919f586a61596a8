package render

import (
	"testing"

	"github.com/synapse-wiki/synapse/ops"
)

// TestLint_EverySection: every lint category has a section that prints
// its findings, and no section is left over for a category that is gone.
func TestLint_EverySection(t *testing.T) {
	names := map[string]bool{}
	for _, c := range ops.LintCategoryList() {
		names[c.Name] = true
		if lintSections[c.Name] == nil {
			t.Errorf("lint category %s has no section in lintSections", c.Name)
		}
	}
	for name := range lintSections {
		if !names[name] {
			t.Errorf("lintSections prints %s, which is no lint category", name)
		}
	}
}
