package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"
)

// The activity feed (recent.jsonl) has one line per revision recorded, in
// the order they were recorded: the page id and the revision. It is what
// `synapse recent` reads, newest first, without opening a pack. It is kept
// between recentKeep and recentMax bytes: past recentMax its oldest lines
// are dropped. Lines are appended without a flush of their own; a line
// lost in a crash loses nothing but its mention in the feed.
const (
	recentMax  = 8 << 20
	recentKeep = 4 << 20
)

// Activity is a revision as the feed lists it.
type Activity struct {
	ID string `json:"id"` // the page id (at the time)
	Revision
	// Recorded is when the revision was recorded: its Time for a write,
	// later for a hand edit (Time is then the file's modification time).
	Recorded time.Time `json:"recorded"`
}

// appendRecent adds revs of page id to the feed. The lock is held.
func (s *Store) appendRecent(id string, revs []Revision) error {
	var b []byte
	now := s.now()
	for _, r := range revs {
		line, err := json.Marshal(Activity{ID: id, Revision: r, Recorded: now})
		if err != nil {
			return err
		}
		b = append(append(b, line...), '\n')
	}
	f, err := s.fs.OpenAppend(recentFile)
	if errors.Is(err, fs.ErrNotExist) {
		return s.writeFile(recentFile, b, false)
	}
	if err != nil {
		return fmt.Errorf("append to %s: %w", name(recentFile), err)
	}
	st, err := f.Stat()
	if err == nil {
		_, err = f.Write(b)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("append to %s: %w", name(recentFile), err)
	}
	if st.Size()+int64(len(b)) > recentMax {
		return s.trimRecent()
	}
	return nil
}

// trimRecent keeps the newest recentKeep bytes of whole lines.
func (s *Store) trimRecent() error {
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
			if len(lines[i]) == 0 || json.Unmarshal(lines[i], &a) != nil {
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
