package ops

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/store"
)

// The review journal's events (docs/review.md). Every change to the queue
// is one event, and an item is what its events make of it, folded in time
// order by applyEvent: the live path (enqueue, decide, claim) folds the
// event it journals into the stored item with the same function that a
// replay of the journal uses, so that a replay rebuilds the queue item by
// item.

// Event kinds, as the journal spells them.
const (
	evFiled     = "filed"     // a proposal that made a new item
	evRefreshed = "refreshed" // a proposal for an item already in the queue
	evClaimed   = "claimed"   // a command acts on a pending item until Until (0 releases it)
	evDecided   = "decided"   // a pending item became terminal
	evItem      = "item"      // a compacted line: an item's proposal, decisions and claim
)

// journalVersion is the v of the lines this synapse writes; a line of a
// later version is reported, not guessed at.
const journalVersion = 1

// revEvent is one event, parsed.
type revEvent struct {
	Kind  string // evFiled, evRefreshed, evClaimed or evDecided (an item line expands into these)
	T     int64  // Unix ns; the item's created or reviewed time when the event makes one
	Key   uint64 // the enqueue key (ReviewKey)
	ID    string // the item's public id as the writer knew it
	Type  string
	Title string
	// a proposal's fields (filed, refreshed)
	Rationale, Page, Source string
	Refs, Queries           []string
	// By is the proposer's origin (filed, refreshed) or who decided
	// (decided).
	By string
	// FieldBy, from a compacted line, names who wrote the title,
	// rationale, page and source (in that order); "" = By.
	FieldBy [4]string
	// a decision's status and resolution, and the decider's note
	// (decided)
	Status, Resolution, Note string
	Until                    int64 // claimed: the end of the claim (Unix ns; 0 = released)
	line                     int   // the journal line it came from (1-based; 0 = none)
}

// class orders the kinds of events made at the same time: proposals,
// then claims, then decisions.
func (ev *revEvent) class() int {
	switch ev.Kind {
	case evClaimed:
		return 1
	case evDecided:
		return 2
	}
	return 0
}

// identity is what makes two events the same event: two lines with the
// same identity (a line that a git merge kept from both sides, an
// imported journal, a compacted item's decision beside the line it came
// from) count once. Informational fields (the id, type and title of a
// claim or a decision, the kind of a proposal) are not part of it.
func (ev *revEvent) identity() [16]byte {
	h := fnv.New128a()
	w := func(parts ...string) {
		for _, p := range parts {
			h.Write([]byte(p))
			h.Write([]byte{0})
		}
	}
	w(strconv.Itoa(ev.class()), strconv.FormatUint(ev.Key, 16), strconv.FormatInt(ev.T, 10))
	switch ev.Kind {
	case evClaimed:
		w(strconv.FormatInt(ev.Until, 10))
	case evDecided:
		w(ev.Status, ev.Resolution, ev.By)
		if ev.Note != "" {
			w(ev.Note) // a line without one hashes as before notes were kept
		}
	default:
		w(ev.Title, ev.Rationale, ev.Page, ev.Source, ev.By)
		w(ev.FieldBy[:]...)
		w(strings.Join(ev.Refs, "\x1f"), strings.Join(ev.Queries, "\x1f"))
	}
	var out [16]byte
	h.Sum(out[:0])
	return out
}

// before orders events: by time, then class, then identity (so that any
// order of the same lines folds the same).
func (ev *revEvent) before(o *revEvent) int {
	if c := cmp.Compare(ev.T, o.T); c != 0 {
		return c
	}
	if c := cmp.Compare(ev.class(), o.class()); c != 0 {
		return c
	}
	a, b := ev.identity(), o.identity()
	return bytes.Compare(a[:], b[:])
}

// originRank orders producers for a field both wrote: a person over an
// agent over synapse's own producers (rule, lint), which rank alike.
func originRank(o string) int {
	switch o {
	case OriginUser:
		return 2
	case OriginAgent:
		return 1
	}
	return 0
}

// setField gives a text field a proposal's value: when the proposal has
// one and the field is empty or was written by a producer that does not
// rank above the proposer. A refresh by lint thus fills what an agent's
// item lacks but never replaces the rationale the agent wrote.
func setField(cur, curBy *string, val, by string) {
	if val == "" {
		return
	}
	if *cur == "" || originRank(by) >= originRank(*curBy) {
		*cur, *curBy = val, by
	}
}

// decisionConflict is a second decision for an item that an earlier one
// decided otherwise: the earlier stands (a merge of two journals).
type decisionConflict struct {
	Kept  *store.ReviewRec
	Other *revEvent
}

// applyEvent folds ev into r (nil: no item yet) and returns the item it
// makes; r is not changed. A terminal item is never changed: a proposal
// or claim for it is ignored, and a decision with another status is
// returned as a conflict (the same status again is no news). A claim or a
// decision for an item no proposal made creates it from the event, so
// that a decision outlives a lost line.
func applyEvent(r *store.ReviewRec, ev *revEvent) (*store.ReviewRec, *decisionConflict) {
	if r == nil {
		by := ev.By
		if ev.Kind == evClaimed || by == "" {
			by = OriginAgent
		}
		r = &store.ReviewRec{Key: ev.Key, ID: ev.ID, Type: ev.Type, Status: StatusPending, Title: ev.Title,
			Origin: by, CreatedNS: ev.T, TitleBy: by, RationaleBy: by, PageBy: by, SourceBy: by}
		if ev.Kind == evFiled || ev.Kind == evRefreshed {
			r.Title = ""
		}
	} else {
		c := *r
		r = &c
	}
	if r.Terminal() {
		if ev.Kind == evDecided && ev.Status != r.Status {
			return r, &decisionConflict{Kept: r, Other: ev}
		}
		return r, nil
	}
	switch ev.Kind {
	case evClaimed:
		r.ClaimNS = ev.Until
	case evDecided:
		r.Status, r.Resolution, r.DecidedBy, r.ReviewedNS, r.ClaimNS, r.Note = ev.Status, ev.Resolution, ev.By, ev.T, 0, ev.Note
	default:
		by := func(i int) string { return cmp.Or(ev.FieldBy[i], ev.By) }
		setField(&r.Title, &r.TitleBy, ev.Title, by(0))
		setField(&r.Rationale, &r.RationaleBy, ev.Rationale, by(1))
		setField(&r.Page, &r.PageBy, ev.Page, by(2))
		setField(&r.Source, &r.SourceBy, ev.Source, by(3))
		r.Referenced = mergeList(ev.Refs, r.Referenced, MaxReferencedPages)
		r.Queries = mergeList(ev.Queries, r.Queries, MaxSearchQueries)
	}
	return r, nil
}

// sameReview reports whether two records of one item hold the same state.
func sameReview(a, b *store.ReviewRec) bool {
	return a.Status == b.Status && a.Resolution == b.Resolution && a.DecidedBy == b.DecidedBy && a.Note == b.Note &&
		a.ReviewedNS == b.ReviewedNS && a.ClaimNS == b.ClaimNS &&
		a.Title == b.Title && a.Rationale == b.Rationale && a.Page == b.Page && a.Source == b.Source &&
		a.TitleBy == b.TitleBy && a.RationaleBy == b.RationaleBy && a.PageBy == b.PageBy && a.SourceBy == b.SourceBy &&
		slices.Equal(a.Referenced, b.Referenced) && slices.Equal(a.Queries, b.Queries)
}

// record applies ev to the stored item old (nil: none) in tx and journals
// it, unless it changes nothing. ev.T is stamped here (strictly after
// every event the store handed out before). It returns the item as
// stored and whether it changed.
func record(tx *store.Tx, old *store.ReviewRec, ev *revEvent, now time.Time) (*store.ReviewRec, bool, error) {
	ev.T = tx.ReviewStamp(now.UnixNano())
	if old != nil {
		ev.Key, ev.ID, ev.Type = old.Key, old.ID, old.Type
		if ev.Title == "" {
			ev.Title = old.Title
		}
	}
	next, _ := applyEvent(old, ev)
	if old != nil && sameReview(next, old) {
		return old, false, nil
	}
	if err := tx.PutReview(next); err != nil {
		return nil, false, err
	}
	ev.ID = next.ID
	line, err := encodeEvent(ev)
	if err != nil {
		return nil, false, err
	}
	tx.JournalReview(line)
	return next, true, nil
}

// ---- lines ----

// journalLine is a line of the journal as JSON.
type journalLine struct {
	V          int      `json:"v"`
	T          string   `json:"t"` // RFC 3339, nanoseconds, UTC
	Ev         string   `json:"ev"`
	ID         string   `json:"id"`
	Key        string   `json:"key"` // 16 hexadecimal digits
	Type       string   `json:"type"`
	Title      string   `json:"title"`
	Rationale  string   `json:"rationale,omitempty"`
	Page       string   `json:"page,omitempty"`
	Source     string   `json:"source,omitempty"`
	Refs       []string `json:"referenced_pages,omitempty"`
	Queries    []string `json:"search_queries,omitempty"`
	By         string   `json:"by,omitempty"`
	Status     string   `json:"status,omitempty"`
	Resolution string   `json:"resolution,omitempty"`
	Note       string   `json:"note,omitempty"` // the decider's note (decided); a line without one has none
	Until      string   `json:"until,omitempty"`
	// a compacted item line: who wrote each text field, the decisions
	// (oldest first: the first stands) and a live claim
	FieldBy   *fieldOrigins  `json:"field_by,omitempty"`
	Decisions []lineDecision `json:"decisions,omitempty"`
	Claim     *lineClaim     `json:"claim,omitempty"`
}

type fieldOrigins struct {
	Title     string `json:"title,omitempty"`
	Rationale string `json:"rationale,omitempty"`
	Page      string `json:"page,omitempty"`
	Source    string `json:"source,omitempty"`
}

type lineDecision struct {
	T          string `json:"t"`
	Status     string `json:"status"`
	Resolution string `json:"resolution,omitempty"`
	By         string `json:"by,omitempty"`
	Note       string `json:"note,omitempty"`
}

type lineClaim struct {
	T     string `json:"t"`
	Until string `json:"until"`
}

func fmtNS(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }

func parseNS(s string) (int64, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, err
	}
	return t.UnixNano(), nil
}

// encodeEvent is the journal line of an event (ending in '\n').
func encodeEvent(ev *revEvent) ([]byte, error) {
	l := journalLine{V: journalVersion, T: fmtNS(ev.T), Ev: ev.Kind, ID: ev.ID, Key: fmt.Sprintf("%016x", ev.Key),
		Type: ev.Type, Title: ev.Title, By: ev.By}
	switch ev.Kind {
	case evClaimed:
		if ev.Until != 0 {
			l.Until = fmtNS(ev.Until)
		}
	case evDecided:
		l.Status, l.Resolution, l.Note = ev.Status, ev.Resolution, ev.Note
	default:
		l.Rationale, l.Page, l.Source, l.Refs, l.Queries = ev.Rationale, ev.Page, ev.Source, ev.Refs, ev.Queries
	}
	return marshalLine(&l)
}

// marshalLine encodes a line without HTML escaping (the journal is read
// by people and grep), ending in '\n'.
func marshalLine(l *journalLine) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// itemLine is the compacted line of an item: its state as one proposal
// made when it was created (with who wrote each field), its decisions and
// a claim that has not ended. Folded, it makes the item again; beside the
// events it came from (a git merge of a compacted journal with one that
// was not), its decisions are the same events and its proposal leaves the
// fields as they were. An item that no proposal made (bare: only its
// decisions are in the journal) gets no proposal (no by), so that a
// proposal that comes later makes it as it would have.
func itemLine(r *store.ReviewRec, decisions []*revEvent, bare bool, now time.Time) ([]byte, error) {
	l := journalLine{V: journalVersion, T: fmtNS(r.CreatedNS), Ev: evItem, ID: r.ID, Key: fmt.Sprintf("%016x", r.Key),
		Type: r.Type, Title: r.Title, Rationale: r.Rationale, Page: r.Page, Source: r.Source,
		Refs: r.Referenced, Queries: r.Queries, By: r.Origin}
	if bare {
		l.Rationale, l.Page, l.Source, l.Refs, l.Queries, l.By = "", "", "", nil, nil, ""
	}
	fo := fieldOrigins{Title: r.TitleBy, Rationale: r.RationaleBy, Page: r.PageBy, Source: r.SourceBy}
	for _, p := range []*string{&fo.Title, &fo.Rationale, &fo.Page, &fo.Source} {
		if *p == r.Origin {
			*p = ""
		}
	}
	if fo != (fieldOrigins{}) && !bare {
		l.FieldBy = &fo
	}
	if len(decisions) == 0 && r.Terminal() {
		decisions = []*revEvent{{Kind: evDecided, T: r.ReviewedNS, Status: r.Status, Resolution: r.Resolution, By: r.DecidedBy, Note: r.Note}}
	}
	for _, d := range decisions {
		l.Decisions = append(l.Decisions, lineDecision{T: fmtNS(d.T), Status: d.Status, Resolution: d.Resolution, By: d.By, Note: d.Note})
	}
	if !r.Terminal() && r.ClaimNS > now.UnixNano() {
		l.Claim = &lineClaim{T: fmtNS(r.CreatedNS), Until: fmtNS(r.ClaimNS)}
	}
	return marshalLine(&l)
}
