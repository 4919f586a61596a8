package ops

import (
	"reflect"
	"testing"
)

// TestDecode_ZeroClampsToMinimum: a parameter given as 0 or less is
// clamped to its minimum; only an absent parameter takes the default
// (k=0 must not give the default 5, nor k=-3 give 1).
func TestDecode_ZeroClampsToMinimum(t *testing.T) {
	cases := []struct {
		op    *Op
		raw   string
		field string
		want  int64
	}{
		{opSearch, `{"query":"x"}`, "K", 5},
		{opSearch, `{"query":"x","k":0}`, "K", 1},
		{opSearch, `{"query":"x","k":-3}`, "K", 1},
		{opSearch, `{"query":"x","k":99}`, "K", 50},
		{opNeighbors, `{"title":"x","depth":0}`, "Depth", 1},
		{opNeighbors, `{"title":"x"}`, "Depth", 1},
		{opListPages, `{"limit":0}`, "Limit", 1},
		{opListPages, `{}`, "Limit", 100},
		{opListReviews, `{"limit":0}`, "Limit", 1},
		{opListReviews, `{"limit":-1}`, "Limit", 1},
		{opListReviews, `{}`, "Limit", 50},
	}
	for _, c := range cases {
		in, err := c.op.Decode([]byte(c.raw))
		if err != nil {
			t.Fatalf("%s %s: %v", c.op.Name, c.raw, err)
		}
		if err := Normalize(in); err != nil {
			t.Fatalf("%s %s: %v", c.op.Name, c.raw, err)
		}
		got := reflect.ValueOf(in).Elem().FieldByName(c.field).Int()
		if got != c.want {
			t.Errorf("%s %s: %s = %d, want %d", c.op.Name, c.raw, c.field, got, c.want)
		}
	}
}

// TestClampNotes: every value Normalize clamps gets a note naming the flag,
// the value given and the one used; a value in range or a default gets
// none (the CLI prints the notes, so `-k 99` is not made 50 in silence).
func TestClampNotes(t *testing.T) {
	cases := []struct {
		op   *Op
		raw  string
		want []string
	}{
		{opSearch, `{"query":"x","k":99}`, []string{"-k 99 is above its maximum: 50 is used"}},
		{opSearch, `{"query":"x","k":0}`, []string{"-k 0 is below its minimum: 1 is used"}},
		{opSearch, `{"query":"x","k":50}`, nil},
		{opSearch, `{"query":"x"}`, nil},
		{opNeighbors, `{"title":"x","depth":3}`, []string{"--depth 3 is above its maximum: 2 is used"}},
		{opListPages, `{"limit":5000,"offset":-2}`, []string{"--limit 5000 is above its maximum: 1000 is used", "--offset -2 is below its minimum: 0 is used"}},
		{opListPages, `{}`, nil},
		{opListReviews, `{}`, nil},
	}
	for _, c := range cases {
		in, err := c.op.Decode([]byte(c.raw))
		if err != nil {
			t.Fatalf("%s %s: %v", c.op.Name, c.raw, err)
		}
		if got := ClampNotes(in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %s: notes %q, want %q", c.op.Name, c.raw, got, c.want)
		}
	}
}
