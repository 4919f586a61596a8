package ops

import (
	"reflect"
	"testing"
)

// TestDecode_ZeroClampsToMinimum: a parameter given as 0 or less is
// clamped to its minimum; only an absent parameter takes the default
// (issue 14: k=0 gave the default 5, k=-3 gave 1).
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
