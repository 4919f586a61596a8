package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The JSON Schema library is a patched copy (third_party/jsonschema,
// docs/performance.md) that compiles the drafts' metaschemas on the first
// NewCompiler instead of in its package init. A schema that breaks its
// metaschema must still be refused, in every draft, and an instance must
// still be checked against a schema.
func TestSchemaCompiler_MetaschemaStillValidates(t *testing.T) {
	for _, draft := range []string{
		"http://json-schema.org/draft-04/schema#",
		"http://json-schema.org/draft-07/schema#",
		"https://json-schema.org/draft/2019-09/schema",
		"https://json-schema.org/draft/2020-12/schema",
	} {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(`{"$schema": "` + draft + `", "type": 5}`))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("bad.json", doc); err != nil {
			t.Fatal(err)
		}
		_, err = c.Compile("bad.json")
		var sve *jsonschema.SchemaValidationError
		if !errors.As(err, &sve) {
			t.Errorf("%s: a schema with \"type\": 5 compiled (err %v); want a metaschema validation error", draft, err)
		}
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(`{"type": "object", "properties": {"k": {"type": "integer", "minimum": 1}}, "additionalProperties": false}`))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("ok.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("ok.json")
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]bool{`{"k": 3}`: true, `{"k": 0}`: false, `{"k": "3"}`: false, `{"x": 1}`: false} {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if got := sch.Validate(v) == nil; got != want {
			t.Errorf("validate %s: valid %v, want %v", in, got, want)
		}
	}
}
