package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/history"
	"github.com/synapse-wiki/synapse/store"
)

// Recent activity: what changed in the wiki and what was decided, newest
// first. Page changes come from the page history's feed (history.Recent):
// pages created, updated, restored and moved through synapse, and edits
// made outside it that the history recorded. Review decisions come from
// the review queue (recentDecisions), brought in step with the review
// journal first, so decisions another machine made (a git pull) count.

// RecentIn is the input of recent.
type RecentIn struct {
	Since string `json:"since,omitempty" desc:"Only what happened since then: a duration back from now (90m, 24h, 7d, 2w) or a date or time (2026-05-01, 2026-05-01T10:00:00Z)"`
	Limit int    `json:"limit,omitempty" default:"50" min:"1" max:"500" desc:"Most entries to return, newest first"`
}

// RecentItem is one thing that happened.
type RecentItem struct {
	Time time.Time `json:"time"`
	// Kind is "page" (a page changed) or "review" (review items were
	// filed, or one was decided).
	Kind string `json:"kind"`
	// Action says what happened: for a page created, updated, restored,
	// moved or edited (changed outside synapse); for a review item its
	// terminal status (created, skipped, dismissed, deep_researched,
	// auto_resolved), or resolved for an item a user or an agent marked
	// resolved by hand (its status is auto_resolved; decided_by says who);
	// filed for items added to the queue (Count of them, by Origin).
	Action string `json:"action"`
	Title  string `json:"title"`
	// ID is the page's id (at the time) or the review item's.
	ID   string `json:"id"`
	Path string `json:"path,omitempty"`
	// Rev is the page's history revision; From the revision a restore
	// wrote back; MovedFrom the file a move left.
	Rev       int    `json:"rev,omitempty"`
	From      int    `json:"from,omitempty"`
	MovedFrom string `json:"moved_from,omitempty"`
	// MoveOf is the page whose move rewrote this page's links (action
	// "links rewritten"): its title after the move.
	MoveOf string `json:"move_of,omitempty" desc:"For links rewritten: the page whose move rewrote them (its new title)"`
	// Type is a review item's type; DecidedBy who decided it (user,
	// agent by hand; rule, lint automatically).
	Type      string `json:"type,omitempty"`
	DecidedBy string `json:"decided_by,omitempty"`
	// Count and Origin, for action filed: how many items one command
	// added and who filed them (rule for a write's dangling links, lint,
	// agent, user).
	Count  int    `json:"count,omitempty" desc:"For filed: how many review items were added together (their titles, the first few, in title)"`
	Origin string `json:"origin,omitempty" desc:"For filed: who filed the items (rule: a write's dangling links; lint; agent; user)"`
	// Note is the writer's --log note of a page change, or the note a
	// review decision was given.
	Note string `json:"note,omitempty" desc:"The writer's note: a page write's log line (--log), or why a review item was decided (review resolve --note)"`
}

// RecentOut is the result of recent.
type RecentOut struct {
	// Since is the start of the window asked for (RFC 3339), "" for all.
	Since string       `json:"since,omitempty"`
	Items []RecentItem `json:"items"`
	// More says that older entries were left out (the limit, or the size
	// bound MaxRecentBytes); ask again with a smaller window or a larger
	// limit.
	More bool `json:"more"`
	// Note says why the answer lists no page changes when synapse has
	// written nothing in this vault yet.
	Note string `json:"note,omitempty" desc:"Why no page changes are listed: the page history starts at synapse's first write in this vault"`
}

var opRecent = register(Op{
	Name: "recent", Summary: "What changed in the wiki and what was decided, newest first: pages created, updated, restored, moved or edited, review items filed, and review decisions",
	CLI: "recent", MCP: "recent_activity", REST: []Route{{Method: "GET", Path: "/recent"}},
	Access: Read, Limits: "limit 1..500 (default 50); the answer stays under 16 KB (more says what was left out)",
	Title: "List recent activity",
	Examples: []Example{
		{`synapse recent`, "the newest 50 changes and decisions"},
		{`synapse recent --since 24h`, "what happened in the last day (also 90m, 7d, 2w, or a date: 2026-05-01)"},
		{`synapse recent --since 7d --limit 200 --json`, "a week, as JSON"},
	},
	Exits: map[int]string{2: "invalid input: --since is not a duration (90m, 24h, 7d, 2w) or a date"},
}, recent)

// MaxRecentBytes bounds the JSON of a recent answer: it fits an agent's
// context whatever the limit.
const MaxRecentBytes = 16 << 10

// pageActions names a history op as recent lists it.
var pageActions = map[string]string{
	history.OpCreate: "created", history.OpWrite: "updated", history.OpRestore: "restored",
	history.OpMove: "moved", history.OpEdit: "edited", history.OpRelink: "links rewritten",
}

func recent(ctx context.Context, e *Env, in *RecentIn) (*RecentOut, error) {
	since, err := parseSince(in.Since, e.now())
	if err != nil {
		return nil, err
	}
	limit := max(in.Limit, 1)
	out := &RecentOut{Items: []RecentItem{}}
	if !since.IsZero() {
		out.Since = since.UTC().Format(time.RFC3339)
	}
	acts, more, err := recentActs(e, since, limit)
	if err != nil {
		return nil, err
	}
	for _, a := range acts {
		action := pageActions[a.Op]
		if action == "" {
			action = a.Op
		}
		out.Items = append(out.Items, RecentItem{Time: a.Time, Kind: "page", Action: action, Title: a.Title,
			ID: a.ID, Path: a.Path, Rev: a.Rev, From: a.From, MovedFrom: a.MovedFrom, MoveOf: a.MoveOf, Note: a.Note})
	}
	if len(acts) == 0 {
		if out.Note, err = historyStartNote(e); err != nil {
			return nil, err
		}
	}
	if err := e.syncQueue(); err != nil {
		return nil, err
	}
	var recs []*store.ReviewRec
	err = e.Store.View(func(tx *store.Tx) error {
		// the queue, read once for the decisions and the filings (a
		// cache of the review journal: each item's decision as the
		// journal has it, the first one, its time and who made it)
		var err error
		recs, _, err = tx.ListReviews(store.ReviewFilter{Class: store.ReviewClassAll, Limit: tx.ReviewCount()})
		return err
	})
	if err != nil {
		return nil, err
	}
	out.Items = append(append(out.Items, recentDecisions(recs, since, limit)...), recentFiled(recs, since, limit)...)
	sort.SliceStable(out.Items, func(i, j int) bool { return out.Items[i].Time.After(out.Items[j].Time) })
	if more && len(acts) > 0 {
		// the history holds older page activity than was read: nothing
		// older than what was read may be listed, or a gap would open
		// (a decision shown, the page writes before it not)
		oldest := acts[len(acts)-1].Time
		n := len(out.Items)
		for n > 0 && out.Items[n-1].Time.Before(oldest) {
			n--
		}
		out.Items = out.Items[:n]
	}
	if len(out.Items) > limit {
		out.Items, more = out.Items[:limit], true
	}
	// within the size bound: the oldest go first
	for len(out.Items) > 0 {
		b, err := json.Marshal(out)
		if err != nil || len(b) <= MaxRecentBytes {
			break
		}
		n := len(out.Items) * MaxRecentBytes / len(b)
		out.Items, more = out.Items[:min(n, len(out.Items)-1)], true
	}
	out.More = more
	return out, nil
}

// recentActs reads the page history's activity at or after since, newest
// first: at least limit entries worth listing when the history has them,
// and whether it holds older ones. The first version synapse saw of a
// page it had never written (recorded as its first write replaced it) is
// no change anyone made then and is passed over; page history lists it.
func recentActs(e *Env, since time.Time, limit int) ([]history.Activity, bool, error) {
	for n := limit; ; n *= 2 {
		acts, more, err := e.History.Recent(since, n)
		if err != nil {
			return nil, false, errs.Wrap(errs.Internal, err, "read the page history's activity: %v", err)
		}
		kept := acts[:0]
		for _, a := range acts {
			if !(a.Op == history.OpEdit && a.Origin == history.OriginFile && a.Rev == 1) {
				kept = append(kept, a)
			}
		}
		if len(kept) >= limit || !more || n >= 16*limit {
			return kept, more, nil
		}
	}
}

// recentDecisions lists the items of recs decided at or after since,
// newest first, at most limit.
func recentDecisions(recs []*store.ReviewRec, since time.Time, limit int) []RecentItem {
	var out []RecentItem
	for _, r := range recs {
		if !r.Terminal() || r.ReviewedNS == 0 || (!since.IsZero() && r.ReviewedNS < since.UnixNano()) {
			continue
		}
		action := r.Status
		if r.Status == StatusAutoResolved && manualDecider(r.DecidedBy) {
			action = "resolved" // by hand: decided_by says who
		}
		out = append(out, RecentItem{Time: time.Unix(0, r.ReviewedNS).UTC(), Kind: "review", Action: action,
			Title: r.Title, ID: r.ID, Path: r.Page, Type: r.Type, DecidedBy: r.DecidedBy, Note: r.Note})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	return out[:min(len(out), limit)]
}

// fileBurst is how close in time items of one origin must be filed to
// count as filed together (one write, one lint --to-review).
const fileBurst = 2 * time.Second

// recentFiled lists the items of recs filed at or after since, those of
// one origin filed together as one entry, newest first, at most limit.
func recentFiled(recs []*store.ReviewRec, since time.Time, limit int) []RecentItem {
	var fresh []*store.ReviewRec
	for _, r := range recs {
		if r.CreatedNS > 0 && (since.IsZero() || r.CreatedNS >= since.UnixNano()) {
			fresh = append(fresh, r)
		}
	}
	sort.SliceStable(fresh, func(i, j int) bool { return fresh[i].CreatedNS < fresh[j].CreatedNS })
	var out []RecentItem
	for len(fresh) > 0 {
		k := 1
		for k < len(fresh) && fresh[k].Origin == fresh[0].Origin && fresh[k].CreatedNS-fresh[k-1].CreatedNS <= int64(fileBurst) {
			k++
		}
		out = append(out, filedEntry(fresh[:k]))
		fresh = fresh[k:]
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	return out[:min(len(out), limit)]
}

// filedEntry is one recent entry for items filed together: the item
// itself when alone, else their count and first titles.
func filedEntry(group []*store.ReviewRec) RecentItem {
	last := group[len(group)-1]
	it := RecentItem{Time: time.Unix(0, last.CreatedNS).UTC(), Kind: "review", Action: "filed", Count: len(group), Origin: group[0].Origin}
	types := map[string]bool{}
	var titles []string
	for _, r := range group {
		types[r.Type] = true
		if len(titles) < 3 {
			titles = append(titles, r.Title)
		}
	}
	if len(types) == 1 {
		it.Type = group[0].Type
	}
	if len(group) == 1 {
		it.Title, it.ID, it.Path = group[0].Title, group[0].ID, group[0].Page
		return it
	}
	it.Title = strings.Join(titles, ", ")
	if more := len(group) - len(titles); more > 0 {
		it.Title += fmt.Sprintf(" and %d more", more)
	}
	return it
}

var sinceDuration = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\d+)(m|h|d|w)$`) })

// parseSince reads a window's start: "" (none), a duration back from now
// (90m, 24h, 7d, 2w), a date (2026-05-01, local midnight) or an RFC 3339
// time.
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if m := sinceDuration().FindStringSubmatch(strings.ToLower(s)); m != nil {
		n, err := strconv.Atoi(m[1])
		if err == nil && n <= 100000 {
			unit := map[string]time.Duration{"m": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[m[2]]
			return now.Add(-time.Duration(n) * unit), nil
		}
	}
	if t, err := time.ParseInLocation("2006-01-02", s, now.Location()); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, errs.E(errs.Invalid, "%s must be a duration back from now (90m, 24h, 7d, 2w) or a date (2026-05-01) or an RFC 3339 time, not %q", errs.Param("since"), s)
}

// historyStartNote says, when synapse has recorded nothing in the page
// history of this vault, that recent lists no page changes for that
// reason ("" when the history holds a page).
func historyStartNote(e *Env) (string, error) {
	sum, err := e.History.Summary()
	if err != nil || sum.Pages > 0 {
		return "", nil
	}
	pages := 0
	if err := e.Store.View(func(tx *store.Tx) error { pages = tx.PageCount(); return nil }); err != nil {
		return "", err
	}
	return fmt.Sprintf("the page history starts at synapse's first write in this vault, and synapse has written no page here yet: "+
		"the %d pages, made or changed by hand, are not listed (page list shows each one's updated date)", pages), nil
}
