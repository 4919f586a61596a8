package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// The activity feed (recent.jsonl) has one line per revision recorded, in
// the order they were recorded: the page id, the revision, and the
// history's totals after it (Summary; a change that records no revision,
// such as a pruning pass, adds a line of totals alone). It is what
// `synapse recent` reads, newest first, without opening a pack, and its
// last line is the summary. It is kept between recentKeep and recentMax
// bytes: past recentMax its oldest lines are dropped. Lines are appended
// without a flush of their own; a line lost in a crash loses nothing but
// its mention in the feed (and the totals are recounted or off by it).
const (
	recentMax  = 8 << 20
	recentKeep = 4 << 20
)

// Activity is a revision as the feed lists it.
type Activity struct {
	ID string `json:"id,omitempty"` // the page id (at the time)
	Revision
	// Recorded is when the revision was recorded: its Time for a write,
	// later for a hand edit (Time is then the file's modification time).
	Recorded time.Time `json:"recorded"`
	// Totals are the history's totals after this line's change (the last
	// line's are the summary); nil on lines of older revisions of one
	// change.
	Totals *Summary `json:"totals,omitempty"`
}

// appendRecent adds revs of page id to the feed, the last line with the
// totals s.sum (a line of totals alone when revs is empty). The lock is
// held.
func (s *Store) appendRecent(id string, revs []Revision) error {
	var b []byte
	now := s.now()
	lines := make([]Activity, len(revs))
	for i, r := range revs {
		lines[i] = Activity{ID: id, Revision: r, Recorded: now}
	}
	if len(lines) == 0 {
		lines = append(lines, Activity{Recorded: now})
	}
	sum := *s.sum
	lines[len(lines)-1].Totals = &sum
	for _, a := range lines {
		line, err := json.Marshal(a)
		if err != nil {
			return err
		}
		b = append(append(b, line...), '\n')
	}
	f, size, err := s.openFeed()
	if errors.Is(err, fs.ErrNotExist) {
		return s.writeFile(recentFile, b, false)
	}
	if err != nil {
		return fmt.Errorf("append to %s: %w", name(recentFile), err)
	}
	_, err = f.Write(b)
	if s.feed == nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		s.closeFeed()
		return fmt.Errorf("append to %s: %w", name(recentFile), err)
	}
	if size+int64(len(b)) > recentMax {
		return s.trimRecent()
	}
	return nil
}

// feedFile is the activity feed as the Store keeps it open for appending
// between changes (Store.feed), with its identity when opened.
type feedFile struct {
	f  *os.File
	st fs.FileInfo
}

// keepFeed says whether the feed stays open between changes: not on
// Windows, where an open file cannot be replaced or deleted.
const keepFeed = runtime.GOOS != "windows"

// openFeed opens the feed for appending and returns its size. The feed
// the Store keeps open is taken while its path still names it (checked
// by one lstat: a feed trimmed, deleted or replaced since, or a history
// folder made anew, is opened again), so an append costs a write
// instead of a walk to the folder, an open, two stats and a close. Only
// the process holding the lock changes the history, and the file is
// opened for appending, so each line still goes at its end. The lock is
// held.
func (s *Store) openFeed() (*os.File, int64, error) {
	if c := s.feed; c != nil {
		st, err := os.Lstat(filepath.Join(s.fs.Root(), recentFile))
		if err == nil && os.SameFile(st, c.st) {
			return c.f, st.Size(), nil
		}
		s.closeFeed()
	}
	f, err := s.fs.OpenAppend(recentFile)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if keepFeed {
		s.feed = &feedFile{f: f, st: st}
	}
	return f, st.Size(), nil
}

// CloseFeed closes the activity feed kept open between changes, if any
// (the next change opens it again): an Env closing leaves no file of the
// vault open, so its file system can be unmounted or remounted.
func (s *Store) CloseFeed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeFeed()
}

// closeFeed closes the feed kept open, if any. The lock is held.
func (s *Store) closeFeed() {
	if s.feed != nil {
		s.feed.f.Close()
		s.feed = nil
	}
}

// trimRecent keeps the newest recentKeep bytes of whole lines.
func (s *Store) trimRecent() error {
	s.closeFeed() // replaced below
	f, _, err := s.fs.Open(recentFile)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	from := max(0, st.Size()-recentKeep)
	buf := make([]byte, st.Size()-from)
	if _, err := f.ReadAt(buf, from); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if from > 0 {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	return s.writeFile(recentFile, buf, false)
}

// Recent returns the feed's revisions recorded at or after since (zero:
// any), newest first, at most limit of them (limit > 0), and whether
// older ones are left out. Lines that do not parse (one cut short by a
// crash) are skipped.
func (s *Store) Recent(since time.Time, limit int) ([]Activity, bool, error) {
	if err := s.ready(false); errors.Is(err, errNoHistory) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	f, _, err := s.fs.Open(recentFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	var out []Activity
	more := false
	// read backwards a chunk at a time, keeping a partial first line
	const chunk = 64 << 10
	end := st.Size()
	var carry []byte
	for end > 0 && !more {
		start := max(0, end-chunk)
		buf := make([]byte, end-start, end-start+int64(len(carry)))
		if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
			return nil, false, err
		}
		buf = append(buf, carry...)
		lines := bytes.Split(buf, []byte("\n"))
		carry = nil
		if start > 0 {
			carry, lines = lines[0], lines[1:]
		}
		for i := len(lines) - 1; i >= 0; i-- {
			var a Activity
			if len(lines[i]) == 0 || json.Unmarshal(lines[i], &a) != nil || a.Rev == 0 {
				continue
			}
			if !since.IsZero() && a.Recorded.Before(since) {
				return out, false, nil // the feed is in the order recorded
			}
			if !since.IsZero() && a.Time.Before(since) {
				continue
			}
			if limit > 0 && len(out) == limit {
				more = true
				break
			}
			out = append(out, a)
		}
		end = start
	}
	return out, more, nil
}

// lastTotals returns the totals of the newest feed line that carries them
// (ok false when there is none: no feed, or none within its last 256 KiB).
func (s *Store) lastTotals() (Summary, bool, error) {
	f, _, err := s.fs.Open(recentFile)
	if errors.Is(err, fs.ErrNotExist) {
		return Summary{}, false, nil
	}
	if err != nil {
		return Summary{}, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Summary{}, false, err
	}
	from := max(0, st.Size()-256<<10)
	buf := make([]byte, st.Size()-from)
	if _, err := f.ReadAt(buf, from); err != nil && !errors.Is(err, io.EOF) {
		return Summary{}, false, err
	}
	for len(buf) > 0 {
		i := bytes.LastIndexByte(bytes.TrimRight(buf, "\n"), '\n')
		line := buf[i+1:]
		buf = buf[:max(i, 0)]
		var a Activity
		if json.Unmarshal(bytes.TrimSpace(line), &a) == nil && a.Totals != nil {
			return *a.Totals, true, nil
		}
		if i < 0 {
			break
		}
	}
	return Summary{}, false, nil
}
