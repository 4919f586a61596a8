package ops

import (
	"context"
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
