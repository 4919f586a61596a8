package ops

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
	"github.com/synapse-wiki/synapse/vaultfs"
)

// Replay: the queue the journal holds, rebuilt into the store's review
// buckets. Lines may come in any order and twice (a git merge of two
// machines' journals keeps the lines of both); each item's events are
// folded in time order (applyEvent), the same event counts once, a
// decision stands against any later proposal, and of two different
// decisions for one item the earlier stands and the other is reported.
// A line that does not parse is skipped and reported by its number, never
// fatal.

// maxReported bounds the line numbers and conflicts a replay keeps.
const maxReported = 20

// JournalProblems is what the last replay of the journal found.
type JournalProblems struct {
	// BadLines counts lines skipped because they do not parse (the first
	// line numbers in BadLineNumbers, 1-based).
	BadLines       int   `json:"bad_lines"`
	BadLineNumbers []int `json:"bad_line_numbers"`
	// Conflicts counts items decided twice, differently (two machines each
	// decided them): the earlier decision stands (ConflictList has the
	// first ones).
	Conflicts    int               `json:"conflicts"`
	ConflictList []JournalConflict `json:"conflict_list"`
	// TornBytes is the size of an unfinished last line cut off (an append
	// a crash stopped before the command answered).
	TornBytes int64 `json:"torn_bytes,omitempty"`
}

func (p *JournalProblems) empty() bool {
	return p == nil || p.BadLines == 0 && p.Conflicts == 0 && p.TornBytes == 0
}

// JournalConflict is an item two decisions disagree on.
type JournalConflict struct {
	ID    string          `json:"id"`
	Title string          `json:"title"`
	Kept  JournalDecision `json:"kept"`
	Other JournalDecision `json:"other"`
}

// JournalDecision is one decision of a conflict.
type JournalDecision struct {
	Status    string `json:"status"`
	DecidedBy string `json:"decided_by"`
	At        string `json:"at"`             // RFC 3339, UTC
	Line      int    `json:"line,omitempty"` // the journal line that holds it
}

// parsedLines is what parseLines read of a journal.
type parsedLines struct {
	events []*revEvent // every event of every good line, in line order
	lines  int64       // lines, blank ones included
	probs  *JournalProblems
	raw    [][]byte      // the good lines, without their '\n'
	byLine [][]*revEvent // the events of each good line
	bad    [][]byte      // the lines that did not parse (but newer ones)
	newer  [][]byte      // lines of a later format (a newer synapse wrote them)
}

// parseLines reads the events of every line it can, and says which lines
// it could not read.
func parseLines(data []byte) *parsedLines {
	p := &parsedLines{probs: &JournalProblems{BadLineNumbers: []int{}, ConflictList: []JournalConflict{}}}
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		p.lines++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		got, err := decodeLine(line)
		if err != nil {
			p.probs.BadLines++
			if len(p.probs.BadLineNumbers) < maxReported {
				p.probs.BadLineNumbers = append(p.probs.BadLineNumbers, int(p.lines))
			}
			if errors.Is(err, errNewerLine) {
				p.newer = append(p.newer, line)
			} else {
				p.bad = append(p.bad, line)
			}
			continue
		}
		for _, ev := range got {
			ev.line = int(p.lines)
		}
		p.events = append(p.events, got...)
		p.raw = append(p.raw, line)
		p.byLine = append(p.byLine, got)
	}
	return p
}

var (
	errBadLine   = errors.New("not a journal line")
	errNewerLine = errors.New("a line of a later journal format")
)

// decodeLine parses one line into its events (a compacted item line holds
// several). Anything it does not understand is an error.
func decodeLine(b []byte) ([]*revEvent, error) {
	var l journalLine
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, err
	}
	if l.V > journalVersion {
		return nil, fmt.Errorf("%w: version %d", errNewerLine, l.V)
	}
	if l.V != journalVersion {
		return nil, fmt.Errorf("%w: version %d", errBadLine, l.V)
	}
	t, err := parseNS(l.T)
	if err != nil {
		return nil, err
	}
	key, err := strconv.ParseUint(l.Key, 16, 64)
	if err != nil || len(l.Key) != 16 || !slices.Contains(ReviewTypes, l.Type) || (l.By != "" && !slices.Contains(Origins, l.By)) {
		return nil, errBadLine
	}
	ev := &revEvent{Kind: l.Ev, T: t, Key: key, ID: l.ID, Type: l.Type, Title: l.Title, By: l.By}
	switch l.Ev {
	case evClaimed:
		if l.Until != "" {
			if ev.Until, err = parseNS(l.Until); err != nil {
				return nil, err
			}
		}
		return []*revEvent{ev}, nil
	case evDecided:
		if !slices.Contains(ReviewStatuses[1:], l.Status) {
			return nil, errBadLine
		}
		ev.Status, ev.Resolution, ev.Note = l.Status, l.Resolution, l.Note
		return []*revEvent{ev}, nil
	case evFiled, evRefreshed, evItem:
	default:
		return nil, errBadLine
	}
	if strings.TrimSpace(l.Title) == "" || l.By == "" && l.Ev != evItem {
		return nil, errBadLine
	}
	ev.Rationale, ev.Page, ev.Source, ev.Refs, ev.Queries = l.Rationale, l.Page, l.Source, l.Refs, l.Queries
	if l.Ev != evItem {
		return []*revEvent{ev}, nil
	}
	return expandItem(&l, ev)
}

// expandItem makes the events of a compacted line: its proposal (made
// when the item was created, with who wrote each field), its decisions
// and its claim.
func expandItem(l *journalLine, ev *revEvent) ([]*revEvent, error) {
	ev.Kind = evFiled
	if f := l.FieldBy; f != nil {
		ev.FieldBy = [4]string{f.Title, f.Rationale, f.Page, f.Source}
		for _, o := range ev.FieldBy {
			if o != "" && !slices.Contains(Origins, o) {
				return nil, errBadLine
			}
		}
	}
	out := []*revEvent{ev}
	if l.By == "" {
		out = nil // an item no proposal made: its decisions only
	}
	for _, d := range l.Decisions {
		t, err := parseNS(d.T)
		if err != nil || !slices.Contains(ReviewStatuses[1:], d.Status) || (d.By != "" && !slices.Contains(Origins, d.By)) {
			return nil, errBadLine
		}
		out = append(out, &revEvent{Kind: evDecided, T: t, Key: ev.Key, ID: ev.ID, Type: ev.Type, Title: ev.Title,
			Status: d.Status, Resolution: d.Resolution, By: d.By, Note: d.Note})
	}
	if c := l.Claim; c != nil {
		t, err1 := parseNS(c.T)
		until, err2 := parseNS(c.Until)
		if err1 != nil || err2 != nil {
			return nil, errBadLine
		}
		out = append(out, &revEvent{Kind: evClaimed, T: t, Key: ev.Key, ID: ev.ID, Type: ev.Type, Title: ev.Title, Until: until})
	}
	return out, nil
}

// folded is the queue a set of events makes.
type folded struct {
	items     []*store.ReviewRec           // queue order: by creation, then key
	decisions map[uint64][]*revEvent       // each item's decisions, oldest first (the first stands)
	conflicts []decisionConflict           // second decisions that disagree, in queue order
	latest    int64                        // the latest event time
	events    int                          // distinct events folded
	bare      map[uint64]bool              // items no proposal made
	byKey     map[uint64]*store.ReviewRec  // the items by key
	seen      map[uint64]map[[16]byte]bool // each item's event identities
}

// foldEvents folds events, in any order and with repeats, into the queue:
// each item's events by time, its first proposal first.
func foldEvents(evs []*revEvent) *folded {
	groups := map[uint64][]*revEvent{}
	f := &folded{decisions: map[uint64][]*revEvent{}, byKey: map[uint64]*store.ReviewRec{},
		seen: map[uint64]map[[16]byte]bool{}, bare: map[uint64]bool{}}
	for _, ev := range evs {
		ids := f.seen[ev.Key]
		if ids == nil {
			ids = map[[16]byte]bool{}
			f.seen[ev.Key] = ids
		}
		if id := ev.identity(); !ids[id] {
			ids[id] = true
			groups[ev.Key] = append(groups[ev.Key], ev)
		}
	}
	for k, g := range groups {
		slices.SortFunc(g, func(a, b *revEvent) int { return a.before(b) })
		// an item exists from its first proposal on: a decision or claim
		// that a machine with a clock behind stamped earlier comes after
		// it, so that the item keeps its id, text and origin
		i := slices.IndexFunc(g, func(ev *revEvent) bool { return ev.class() == 0 })
		if i > 0 {
			first := g[i]
			copy(g[1:i+1], g[:i])
			g[0] = first
		}
		f.bare[k] = i < 0
		var r *store.ReviewRec
		for _, ev := range g {
			var c *decisionConflict
			r, c = applyEvent(r, ev)
			if ev.Kind == evDecided {
				f.decisions[k] = append(f.decisions[k], ev)
			}
			if c != nil {
				f.conflicts = append(f.conflicts, *c)
			}
			f.latest = max(f.latest, ev.T)
			f.events++
		}
		f.items = append(f.items, r)
		f.byKey[k] = r
	}
	slices.SortFunc(f.items, func(a, b *store.ReviewRec) int {
		return cmp.Or(cmp.Compare(a.CreatedNS, b.CreatedNS), cmp.Compare(a.Key, b.Key))
	})
	slices.SortFunc(f.conflicts, func(a, b decisionConflict) int {
		return cmp.Or(cmp.Compare(a.Kept.CreatedNS, b.Kept.CreatedNS), cmp.Compare(a.Kept.Key, b.Kept.Key), cmp.Compare(a.Other.T, b.Other.T))
	})
	return f
}

// line is the compacted line of one of f's items.
func (f *folded) line(r *store.ReviewRec, now time.Time) ([]byte, error) {
	return itemLine(r, f.decisions[r.Key], f.bare[r.Key], now)
}

// report adds the conflicts to probs.
func (f *folded) report(probs *JournalProblems) {
	probs.Conflicts = len(f.conflicts)
	for _, c := range f.conflicts[:min(len(f.conflicts), maxReported)] {
		probs.ConflictList = append(probs.ConflictList, JournalConflict{ID: c.Kept.ID, Title: c.Kept.Title,
			Kept:  JournalDecision{Status: c.Kept.Status, DecidedBy: c.Kept.DecidedBy, At: rfc3339(c.Kept.ReviewedNS)},
			Other: JournalDecision{Status: c.Other.Status, DecidedBy: c.Other.By, At: rfc3339(c.Other.T), Line: c.Other.line}})
	}
}

// storeFolded replaces the queue in tx with f's items (ids as the journal
// recorded them, salted on a collision) and moves the event clock past
// the journal's latest event.
func storeFolded(tx *store.Tx, f *folded) error {
	if err := tx.ReplaceReviews(f.items); err != nil {
		return err
	}
	if f.latest > tx.ReviewClock() {
		return tx.SetReviewClock(f.latest)
	}
	return nil
}

// ReplayReport says what a replay of the journal did.
type ReplayReport struct {
	Items    int              `json:"items"`  // items in the queue after it
	Lines    int64            `json:"lines"`  // lines of the journal
	Events   int              `json:"events"` // distinct events folded
	Problems *JournalProblems `json:"problems"`
	// Upgraded counts items of a queue kept by an older synapse that were
	// written to the journal first; Restored counts items written to a
	// journal that had gone missing.
	Upgraded int `json:"upgraded,omitempty"`
	Restored int `json:"restored,omitempty"`
}

// replayTx replays the journal into tx: the queue becomes the journal's,
// and the mark records the journal as read. A torn last line after what
// the store knew is cut off first (see reviewJournal.Append).
func replayTx(tx *store.Tx, l *vaultfs.FS, now time.Time) (*ReplayReport, error) {
	m, have := readMark(tx)
	end, err := readEnd(l)
	if err != nil {
		return nil, journalError(err, "read")
	}
	var torn int64
	if have && !end.endsLine() {
		before := end.size
		if end, err = cutTorn(l, end, m.Size); err != nil {
			return nil, journalError(err, "repair")
		}
		torn = before - end.size
	}
	data, err := readJournal(l)
	if err != nil {
		return nil, err
	}
	p := parseLines(data)
	lines, probs := p.lines, p.probs
	f := foldEvents(p.events)
	f.report(probs)
	probs.TornBytes = torn
	if err := storeFolded(tx, f); err != nil {
		return nil, err
	}
	nm := markOf(data, lines)
	nm.CompactedNS, nm.ReplayedNS = m.CompactedNS, now.UnixNano()
	if !probs.empty() {
		nm.Problems = probs
	}
	if err := writeMark(tx, nm); err != nil {
		return nil, err
	}
	return &ReplayReport{Items: len(f.items), Lines: lines, Events: f.events, Problems: probs}, nil
}

// queueStale reports whether the store's queue is not the journal's: the
// journal changed since the store last matched it (or has content a
// store that never met it lacks), or it went missing while the store
// holds items.
func queueStale(tx *store.Tx, l *vaultfs.FS) (bool, error) {
	m, have := readMark(tx)
	end, err := readEnd(l)
	if err != nil {
		return false, journalError(err, "read")
	}
	if !end.exists {
		return tx.ReviewCount() > 0, nil
	}
	if !have && end.size == 0 {
		return tx.ReviewCount() > 0, nil // a queue an older synapse kept
	}
	return !end.matches(m, have), nil
}

// syncTx brings the queue in tx in step with the journal (force: replay
// even when they match, as reindex does). It returns what it did, nil
// when nothing. Three cases:
//   - the journal is missing while the store holds items: it is written
//     again from the queue (compacted lines);
//   - the store holds a queue that no journal recorded (kept by an older
//     synapse, or salvaged from a damaged store): what the journal lacks
//     of it is appended as compacted lines, then the journal is replayed
//     (what the journal held already merges with them);
//   - otherwise the journal is replayed.
func syncTx(tx *store.Tx, l *vaultfs.FS, now time.Time, force bool) (*ReplayReport, error) {
	stale, err := queueStale(tx, l)
	if err != nil || (!stale && !force) {
		return nil, err
	}
	_, have := readMark(tx)
	end, err := readEnd(l)
	if err != nil {
		return nil, journalError(err, "read")
	}
	n := tx.ReviewCount()
	switch {
	case !end.exists && n > 0:
		lines, err := queueLines(tx, now)
		if err != nil {
			return nil, err
		}
		if err := createJournal(l, bytes.Join(lines, nil)); err != nil {
			return nil, err
		}
		// replayed at once: the store's items gain what the lines
		// inferred (who decided what an older synapse decided)
		rep, err := replayTx(tx, l, now)
		switch {
		case rep != nil && have:
			rep.Restored = n
		case rep != nil:
			rep.Upgraded = n // an older synapse's vault, without a journal
		}
		return rep, err
	case !have && n > 0:
		lines, err := linesJournalLacks(tx, l, now)
		if err != nil {
			return nil, err
		}
		if len(lines) > 0 {
			if err := upgradeAppend(l, end, lines); err != nil {
				return nil, err
			}
		}
		rep, err := replayTx(tx, l, now)
		if rep != nil {
			rep.Upgraded = len(lines)
		}
		return rep, err
	}
	return replayTx(tx, l, now)
}

// upgradeAppend appends lines to the journal (creating it when missing).
func upgradeAppend(l *vaultfs.FS, end journalEnd, lines [][]byte) error {
	data := bytes.Join(lines, nil)
	if !end.exists {
		return createJournal(l, data)
	}
	if !end.endsLine() {
		data = append([]byte{'\n'}, data...)
	}
	if err := appendDurably(l, data); err != nil {
		return journalError(err, "append to")
	}
	return nil
}

// linesJournalLacks are the compacted lines of the items in tx that the
// journal does not know, or knows pending while tx holds them decided:
// what a queue that no journal recorded (an older synapse's, or what was
// salvaged from a damaged store) adds to the journal, in queue order.
func linesJournalLacks(tx *store.Tx, l *vaultfs.FS, now time.Time) ([][]byte, error) {
	data, err := readJournal(l)
	if err != nil {
		return nil, err
	}
	known := foldEvents(parseLines(data).events).byKey
	var lines [][]byte
	var lerr error
	err = tx.EachReview(func(r *store.ReviewRec) bool {
		if j := known[r.Key]; j != nil && (j.Terminal() || !r.Terminal()) {
			return true
		}
		var line []byte
		if line, lerr = queueLine(r, now); lerr == nil {
			lines = append(lines, line)
		}
		return lerr == nil
	})
	return lines, cmp.Or(err, lerr)
}

// queueLine is the compacted line of an item of the store. An item an
// older synapse decided has no decider: it is inferred from its
// resolution (inferDecider).
func queueLine(r *store.ReviewRec, now time.Time) ([]byte, error) {
	if r.Terminal() && r.DecidedBy == "" {
		r.DecidedBy = inferDecider(r)
	}
	return itemLine(r, nil, false, now)
}

// queueLines are the compacted lines of every item in tx, in queue order.
func queueLines(tx *store.Tx, now time.Time) ([][]byte, error) {
	var lines [][]byte
	var lerr error
	err := tx.EachReview(func(r *store.ReviewRec) bool {
		var line []byte
		line, lerr = queueLine(r, now)
		lines = append(lines, line)
		return lerr == nil
	})
	return lines, cmp.Or(err, lerr)
}

// inferDecider says who decided an item that an older synapse decided
// without recording it: write_page's and lint's automatic resolutions
// are known by their resolution; every other decision was taken by hand,
// by a person as far as synapse can tell.
func inferDecider(r *store.ReviewRec) string {
	switch {
	case r.Status == StatusAutoResolved && strings.HasPrefix(r.Resolution, "page written: "):
		return OriginRule
	case r.Status == StatusAutoResolved && (strings.HasPrefix(r.Resolution, "page exists: ") || strings.HasPrefix(r.Resolution, "a file answers to the name: ")):
		return OriginLint
	}
	return OriginUser
}

// ---- on an Env ----

// syncQueue brings the store's queue in step with the journal before an
// operation that reads or changes it. A store opened read-only is left as
// it is (the next command that can write replays it). What a replay did
// is told through the Notify of the Env's indexer.
func (e *Env) syncQueue() error {
	_, err := e.replayQueue(false)
	return err
}

// replayQueue is syncQueue, or with force a replay whatever the journal
// (reindex). It returns what it did (nil: nothing).
func (e *Env) replayQueue(force bool) (*ReplayReport, error) {
	l := e.files()
	if !force {
		var stale, due bool
		err := e.Store.View(func(tx *store.Tx) error {
			var err error
			stale, err = queueStale(tx, l)
			due = !stale && compactDue(tx)
			return err
		})
		if err != nil || e.Store.ReadOnly() || !stale && !due {
			return nil, err
		}
		if due {
			return nil, e.autoCompact()
		}
	}
	var rep *ReplayReport
	err := e.Store.Update(func(tx *store.Tx) error {
		var err error
		rep, err = syncTx(tx, l, e.now(), force)
		return err
	})
	if err != nil {
		return nil, err
	}
	if rep != nil && !force && e.Index != nil && e.Index.Notify != nil {
		e.Index.Notify(rep.String())
	}
	return rep, nil
}

// autoCompact compacts a journal grown past its threshold (compactDue),
// saying so through Notify.
func (e *Env) autoCompact() error {
	var out *CompactReviewsOut
	err := e.Store.Update(func(tx *store.Tx) error {
		if !compactDue(tx) {
			return nil
		}
		var err error
		out, err = compactTx(tx, e.files(), e.now())
		return err
	})
	if err == nil && out != nil && e.Index != nil && e.Index.Notify != nil {
		e.Index.Notify(fmt.Sprintf("%s compacted: %d lines (%d bytes) to %d, one per item", vault.ReviewJournal, out.LinesBefore, out.BytesBefore, out.Lines))
	}
	return err
}

// String says what a replay did, for a person.
func (r *ReplayReport) String() string {
	var b strings.Builder
	switch {
	case r.Restored > 0:
		fmt.Fprintf(&b, "%s was missing: written again from the review queue (%d items)", vault.ReviewJournal, r.Restored)
	case r.Upgraded > 0:
		fmt.Fprintf(&b, "%d review items the store held were written to %s, which keeps the queue now; the queue replayed from it has %d items", r.Upgraded, vault.ReviewJournal, r.Items)
	default:
		fmt.Fprintf(&b, "the review queue was replayed from %s: %d items from %d lines", vault.ReviewJournal, r.Items, r.Lines)
	}
	if p := r.Problems; p != nil {
		if p.BadLines > 0 {
			fmt.Fprintf(&b, "; %d lines skipped (not journal lines: line %s)", p.BadLines, joinInts(p.BadLineNumbers))
		}
		if p.Conflicts > 0 {
			fmt.Fprintf(&b, "; %d items decided twice, differently: the earlier decision stands (synapse status lists them)", p.Conflicts)
		}
		if p.TornBytes > 0 {
			fmt.Fprintf(&b, "; an unfinished last line (%d bytes, an append a crash cut short) was removed", p.TornBytes)
		}
	}
	return b.String()
}
