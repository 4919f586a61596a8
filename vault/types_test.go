package vault

import (
	"strings"
	"testing"
)

func TestTypes(t *testing.T) {
	for _, c := range []struct {
		t                 string
		wellFormed, valid bool
	}{
		{"concept", true, true}, {"question", true, true}, {"topic", true, true},
		{"source-summary", true, true}, {"v2", true, true}, {"вопрос", true, true}, {"问题", true, true},
		{"index", true, false}, {"log", true, false}, {"overview", true, false},
		{"", false, false}, {"Question", false, false}, {"per son", false, false}, {"per_son", false, false},
		{"-x", false, false}, {"a.b", false, false}, {"Вопрос", false, false},
		{"abcdefghijabcdefghijabcdefghij12", true, true}, {"abcdefghijabcdefghijabcdefghij123", false, false},
	} {
		if got := WellFormedType(c.t); got != c.wellFormed {
			t.Errorf("WellFormedType(%q) = %v", c.t, got)
		}
		if got := ValidType(c.t); got != c.valid {
			t.Errorf("ValidType(%q) = %v", c.t, got)
		}
		if (TypeProblem(c.t) == "") != c.valid {
			t.Errorf("TypeProblem(%q) = %q", c.t, TypeProblem(c.t))
		}
	}
	for in, want := range map[string]string{"Question": "question", " topic ": "topic", "Research Note": "research-note",
		"source_summary": "source-summary", "index": "", "a.b": "", "": ""} {
		if got := NormalizeType(in); got != want {
			t.Errorf("NormalizeType(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSchemaDocumentsTypes(t *testing.T) {
	for _, s := range []string{"## Page types", "--type question", "type:question", "`index`, `log` and `overview`", "wiki/<type>/"} {
		if !strings.Contains(schemaTemplate, s) {
			t.Errorf("schema.md does not say %q", s)
		}
	}
}
