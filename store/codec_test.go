package store

import (
	"errors"
	"reflect"
	"testing"
)

// TestRecordCodecs_RoundTrip: each stored record type, with every field
// set (allSet fails naming one left zero), decodes to the same values, and
// a truncated record is an error. A field added to a record without a
// place in its codec fails here, as TestPageCodec_RoundTrip does for pages.
func TestRecordCodecs_RoundTrip(t *testing.T) {
	file := FileRec{Kind: KindSource, Size: 12, MtimeNS: -5, SHA256: [32]byte{1, 2, 31: 3}, FirstSeen: 7,
		LastChanged: 8, Doc: 300, HashedNS: 1 << 40}
	edge := Edge{To: 200, Out: 2, In: 300, Weight: 1.5}
	adj := &AdjRec{Type: "concept", Sources: []string{"raw/sources/a.md", "raw/sources/b.md"},
		Edges: []Edge{{To: 3, Out: 1, In: 0, Weight: 0.25}, edge}, Deg: 2}
	allSet(t, "FileRec", reflect.ValueOf(file))
	allSet(t, "AdjRec", reflect.ValueOf(*adj))
	allSet(t, "Edge", reflect.ValueOf(edge))
	cases := []struct {
		name   string
		want   any
		encode func() []byte
		decode func([]byte) (any, error)
	}{
		{"file", file, file.encode, func(v []byte) (any, error) { return decodeFileRec(v) }},
		{"adjacency", adj, adj.encode, func(v []byte) (any, error) { return decodeAdj(v) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := c.encode()
			got, err := c.decode(v)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("round trip differs:\n got %+v\nwant %+v", got, c.want)
			}
			if _, err := c.decode(v[:len(v)/2]); !errors.Is(err, errCorrupt) {
				t.Fatalf("truncated record: %v, want errCorrupt", err)
			}
		})
	}
}
