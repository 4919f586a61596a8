package monitor

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// maxEntries bounds the change log: past it the log starts afresh, and a
// token from before is answered "everything may have changed" (Full).
const maxEntries = 200_000

// changeLog numbers the changes the watcher saw and answers which paths
// changed after a token. A token is "instance:seq": instance names this
// run of the monitor (a token of another run is answered Full), seq the
// last change numbered when it was given out.
type changeLog struct {
	mu       sync.Mutex
	instance string
	seq      uint64
	floor    uint64  // a token below it is answered Full (the log was reset)
	entries  []entry // in seq order; a path changed twice is in it twice
}

type entry struct {
	seq  uint64
	path string
}

func newChangeLog() *changeLog {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &changeLog{instance: hex.EncodeToString(b[:])}
}

// note records a change to the vault-relative path p.
func (l *changeLog) note(p string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	if len(l.entries) == maxEntries {
		l.reset()
	}
	l.entries = append(l.entries, entry{l.seq, p})
}

// lost records that changes were missed (the kernel's event queue
// overflowed): every token given out so far is answered Full.
func (l *changeLog) lost() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	l.reset()
}

func (l *changeLog) reset() {
	l.entries = l.entries[:0]
	l.floor = l.seq
}

// token is the token for now.
func (l *changeLog) token() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.instance + ":" + strconv.FormatUint(l.seq, 10)
}

// since returns the token for now and the paths changed after since,
// sorted, each once; full when since cannot be answered (another run's
// token, one from before a reset, or none).
func (l *changeLog) since(since string) (tok string, paths []string, full bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	tok = l.instance + ":" + strconv.FormatUint(l.seq, 10)
	inst, n, ok := strings.Cut(since, ":")
	seq, err := strconv.ParseUint(n, 10, 64)
	if !ok || err != nil || inst != l.instance || seq < l.floor || seq > l.seq {
		return tok, nil, true
	}
	i, _ := slices.BinarySearchFunc(l.entries, seq+1, func(e entry, s uint64) int {
		switch {
		case e.seq < s:
			return -1
		case e.seq > s:
			return 1
		}
		return 0
	})
	for _, e := range l.entries[i:] {
		paths = append(paths, e.path)
	}
	slices.Sort(paths)
	return tok, slices.Compact(paths), false
}
