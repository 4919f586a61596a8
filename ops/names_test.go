package ops

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestSources_NameOver255Bytes: a source path with a name longer than a
// file system holds is invalid, whether read or cited, and the message
// does not print the path twice (before: internal, "file name too long"
// after the path, twice).
func TestSources_NameOver255Bytes(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	long := strings.Repeat("a", 300)
	for _, p := range []string{long + ".md", "raw/sources/" + long + ".md", "deep/" + long, long + "/x.md"} {
		_, err := readSource(context.Background(), e, &ReadSourceIn{Path: p})
		wantCode(t, err, errs.Invalid, "at most 255 bytes")
		if strings.Count(err.Error(), long[:100]) > 0 {
			t.Errorf("read %s…: the message holds the whole name: %v", p[:20], err)
		}
	}
	_, err := WritePage(context.Background(), e, &WritePageIn{Title: "Cites", Content: "---\nsources: [raw/sources/" + long + ".md]\n---\nx\n"})
	wantCode(t, err, errs.Invalid, "cannot be cited", "at most 255 bytes")
	if strings.Count(err.Error(), long[:100]) > 0 {
		t.Errorf("write: the message holds the whole name: %v", err)
	}
	// 255 bytes is a name a file system holds: not found, not refused
	_, err = readSource(context.Background(), e, &ReadSourceIn{Path: strings.Repeat("b", 252) + ".md"})
	wantCode(t, err, errs.NotFound)
}

// TestRestorePage_EmptyIfMatchIsInvalid: as for a write, an empty or
// blank if_match on a restore is refused, never "no check".
func TestRestorePage_EmptyIfMatchIsInvalid(t *testing.T) {
	v := testvault.New(t)
	e := newTestEnv(t, v)
	write(t, e, &WritePageIn{Title: "Page", Content: "one\n"})
	write(t, e, &WritePageIn{Title: "Page", Content: "two\n"})
	snap := snapshot(t, v)
	for _, m := range []string{`""`, `" "`} {
		_, err := opPageRestore.Call(context.Background(), e, []byte(`{"title":"Page","rev":1,"if_match":`+m+`}`))
		wantCode(t, err, errs.Invalid, "if_match is empty")
	}
	if after := snapshot(t, v); !reflect.DeepEqual(after, snap) {
		t.Fatal("a refused restore changed the vault")
	}
}
