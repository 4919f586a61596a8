package store

// Pages past a parse limit (markdown.Limits): indexed as far as the
// limits allow, and listed here so that status and lint can name them;
// and pages over the write cap (index.MaxWriteBytes), indexed whole.
//
//	capped     vault path → what was left out and which limit (text)
//
// A derived bucket: a scan that reads the page again replaces its entry.

var bCapped = []byte("capped")

func init() { registerDerived(string(bCapped)) }

// CappedPage is a page indexed only in part.
type CappedPage struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// PutCapped records what the page at path left out ("" deletes the entry).
func (tx *Tx) PutCapped(path, message string) error {
	b := tx.b(bCapped)
	if message == "" {
		if b.Get([]byte(path)) == nil {
			return nil
		}
		return b.Delete([]byte(path))
	}
	return b.Put([]byte(path), []byte(message))
}

// CappedPages returns the total and the pages in path order from offset,
// at most limit of them (limit ≤ 0: none).
func (tx *Tx) CappedPages(offset, limit int) (int, []CappedPage) {
	b := tx.b(bCapped)
	if b == nil {
		return 0, nil
	}
	total := b.Stats().KeyN
	var out []CappedPage
	c := b.Cursor()
	i := 0
	for k, v := c.First(); k != nil && len(out) < limit; k, v = c.Next() {
		if i++; i <= offset {
			continue
		}
		out = append(out, CappedPage{Path: string(k), Message: string(v)})
	}
	return total, out
}

// Capped returns what the page at path left out ("" when nothing).
func (tx *Tx) Capped(path string) string {
	b := tx.b(bCapped)
	if b == nil {
		return ""
	}
	return string(b.Get([]byte(path)))
}
