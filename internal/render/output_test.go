package render

import (
	"bytes"
	"io"
	"reflect"
	"testing"

	"github.com/synapse-wiki/synapse/embed"
	"github.com/synapse-wiki/synapse/ops"
)

// TestByResult_OneRendererAType: bindings are found by the result type
// they print, and two bindings for one type are refused at start-up.
func TestByResult_OneRendererAType(t *testing.T) {
	m := ByResult([]Binding{Of(Embed)}, []Binding{Of(Lint)})
	if m[reflect.TypeFor[ops.EmbedOut]()] == nil || m[reflect.TypeFor[ops.LintOut]()] == nil || len(m) != 2 {
		t.Fatalf("ByResult = %v", m)
	}
	var buf bytes.Buffer
	if err := m[reflect.TypeFor[ops.EmbedOut]()](New(&buf, io.Discard), &ops.EmbedOut{Provider: "p", Report: embed.Report{Model: "m", Embedded: 3}}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte("embedded 3 pages")) {
		t.Errorf("the bound renderer printed %q", buf.String())
	}
	defer func() {
		if recover() == nil {
			t.Error("two renderers for one result type were accepted")
		}
	}()
	ByResult([]Binding{Of(Embed)}, []Binding{Of(Embed)})
}
