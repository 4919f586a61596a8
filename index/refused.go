package index

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/synapse-wiki/synapse/store"
)

// metaRefused is the store's meta key for the files the scans refused.
const metaRefused = "refused_files"

// maxRefusedKept bounds the refused files the store remembers (the count
// is kept whole).
const maxRefusedKept = 1000

// RefusedList is what the store remembers of the refused files: every
// scan replaces the entries under the folders it walked.
type RefusedList struct {
	Count int       `json:"count"`
	Files []Refused `json:"files"`
}

// RefusedFiles returns the files the scans refused, as last seen.
func RefusedFiles(tx *store.Tx) RefusedList {
	var l RefusedList
	if v := tx.Meta(metaRefused); v != nil {
		_ = json.Unmarshal(v, &l)
	}
	if l.Files == nil {
		l.Files = []Refused{}
	}
	return l
}

// putRefused replaces the remembered refusals under the scanned roots
// with the ones this scan found.
func putRefused(tx *store.Tx, roots []string, found []Refused) error {
	old := RefusedFiles(tx)
	if len(old.Files) == 0 && old.Count == 0 && len(found) == 0 {
		return nil
	}
	under := func(p string) bool {
		for _, r := range roots {
			if p == r || strings.HasPrefix(p, r+"/") {
				return true
			}
		}
		return false
	}
	var keep []Refused
	for _, r := range old.Files {
		if !under(r.Path) {
			keep = append(keep, r)
		}
	}
	// those counted past the cap (paths unknown) stay counted until a scan
	// of everything replaces them
	unlisted := old.Count - len(old.Files)
	if isWhole(roots) {
		unlisted = 0
	}
	keep = append(keep, found...)
	sort.Slice(keep, func(i, j int) bool { return keep[i].Path < keep[j].Path })
	keep = compactRefused(keep)
	l := RefusedList{Count: len(keep) + max(unlisted, 0), Files: keep}
	if len(l.Files) > maxRefusedKept {
		l.Files = l.Files[:maxRefusedKept]
	}
	if l.Count == 0 {
		return tx.DeleteMeta(metaRefused)
	}
	data, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return tx.SetMeta(metaRefused, data)
}

// isWhole reports whether roots cover everything a scan looks at.
func isWhole(roots []string) bool {
	w, s := false, false
	for _, r := range roots {
		w = w || r == "wiki"
		s = s || r == "raw/sources"
	}
	return w && s
}

func compactRefused(s []Refused) []Refused {
	out := s[:0]
	for i, r := range s {
		if i == 0 || r.Path != s[i-1].Path {
			out = append(out, r)
		}
	}
	return out
}
