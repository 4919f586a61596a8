package ops

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
)

// pendingMissing lists the titles of the pending missing-page items.
func pendingMissing(t *testing.T, e *Env) []string {
	t.Helper()
	l, err := listReviews(context.Background(), e, &ListReviewsIn{Status: "pending", Type: TypeMissingPage, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range l.Items {
		out = append(out, it.Title)
	}
	slices.Sort(out)
	return out
}

// TestWrite_FilesOnlyTheDanglingLinksItAdds: a page that already had
// dangling links (written by hand, or by a generator) is edited: the edit
// files nothing for them; a link the edit adds is filed.
func TestWrite_FilesOnlyTheDanglingLinksItAdds(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/concepts/cau.md", "---\ntitle: CAU\n---\nSee [[kb-note-1]] and [[kb-note-2]].\n")
	e, _ := openEnv(t, v)
	out := write(t, e, &WritePageIn{Title: "CAU", Content: "See [[kb-note-1]] and [[kb-note-2]], updated.\n"})
	if len(out.Dangling) != 2 || len(out.Filed) != 0 {
		t.Fatalf("a one-word edit: dangling %v, filed %v", out.Dangling, out.Filed)
	}
	out = write(t, e, &WritePageIn{Title: "CAU", Content: "See [[kb-note-1]], [[KB-Note-2]] and [[kb-note-3]].\n"})
	if !slices.Equal(out.Filed, []string{"kb-note-3"}) || len(out.Dangling) != 3 {
		t.Fatalf("an edit adding a link: dangling %v, filed %v", out.Dangling, out.Filed)
	}
	if got := pendingMissing(t, e); !slices.Equal(got, []string{"kb-note-3"}) {
		t.Fatalf("pending items %v", got)
	}
	// a new page files all of its dangling links
	out = write(t, e, &WritePageIn{Title: "New", Content: "[[kb-note-1]] [[kb-note-4]]\n"})
	if !slices.Equal(out.Filed, []string{"kb-note-1", "kb-note-4"}) {
		t.Fatalf("a new page: filed %v", out.Filed)
	}
}

// TestWrite_FilesAtMostFiftyItems: a write with many distinct dangling
// links files the first MaxFiledPerWrite and counts the rest.
func TestWrite_FilesAtMostFiftyItems(t *testing.T) {
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	var b strings.Builder
	for i := range 130 {
		fmt.Fprintf(&b, "[[Missing %03d]]\n", i)
	}
	out := write(t, e, &WritePageIn{Title: "Citations", Content: b.String()})
	if len(out.Dangling) != 130 || len(out.Filed) != MaxFiledPerWrite || out.NotFiled != 130-MaxFiledPerWrite {
		t.Fatalf("dangling %d, filed %d, not filed %d", len(out.Dangling), len(out.Filed), out.NotFiled)
	}
	if out.Filed[0] != "Missing 000" || out.Filed[49] != "Missing 049" {
		t.Fatalf("filed %v", out.Filed)
	}
	l, err := listReviews(context.Background(), e, &ListReviewsIn{Status: "all", Limit: 1})
	if err != nil || l.Total != MaxFiledPerWrite {
		t.Fatalf("queue holds %d items (%v)", l.Total, err)
	}
}

// TestWrite_ClosesItemsItUnlinks: a missing-page item closes (auto_resolved,
// decided by rule) when a write removes the last link to its target; while
// another page still links to it, it stays pending; a decided item is never
// touched.
func TestWrite_ClosesItemsItUnlinks(t *testing.T) {
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	write(t, e, &WritePageIn{Title: "A", Content: "See [[Ghost]] and [[Shade]].\n"})
	write(t, e, &WritePageIn{Title: "B", Content: "Also [[Ghost]].\n"})
	if got := pendingMissing(t, e); !slices.Equal(got, []string{"Ghost", "Shade"}) {
		t.Fatalf("pending items %v", got)
	}
	out := write(t, e, &WritePageIn{Title: "A", Content: "No links now.\n"})
	if len(out.AutoResolved) != 1 {
		t.Fatalf("removing [[Ghost]] (still linked from B) and [[Shade]]: auto_resolved %v", out.AutoResolved)
	}
	if got := pendingMissing(t, e); !slices.Equal(got, []string{"Ghost"}) {
		t.Fatalf("pending items after A's edit %v", got)
	}
	l, err := listReviews(context.Background(), e, &ListReviewsIn{Status: "auto_resolved", Limit: 10})
	if err != nil || len(l.Items) != 1 || l.Items[0].Title != "Shade" || l.Items[0].DecidedBy != OriginRule ||
		!strings.Contains(l.Items[0].Resolution, "no page links to it") {
		t.Fatalf("the closed item: %+v %v", l, err)
	}
	out = write(t, e, &WritePageIn{Title: "B", Content: "Nothing.\n"})
	if len(out.AutoResolved) != 1 || len(pendingMissing(t, e)) != 0 {
		t.Fatalf("the last link to Ghost removed: auto_resolved %v, pending %v", out.AutoResolved, pendingMissing(t, e))
	}
	// a decided item stays as decided when its link comes and goes again
	write(t, e, &WritePageIn{Title: "C", Content: "[[Wraith]]\n"})
	items, _ := listReviews(context.Background(), e, &ListReviewsIn{Status: "pending", Limit: 10})
	if _, err := resolveReview(context.Background(), e, items.Items[0].ID, ActionDismiss, OriginAgent, ""); err != nil {
		t.Fatal(err)
	}
	if out := write(t, e, &WritePageIn{Title: "C", Content: "gone\n"}); len(out.AutoResolved) != 0 {
		t.Fatalf("a dismissed item was closed again: %v", out.AutoResolved)
	}
}
