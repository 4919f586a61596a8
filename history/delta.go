package history

import (
	"encoding/binary"
	"errors"

	udiff "github.com/aymanbagabas/go-udiff"
)

// A delta is the line edits that turn a base revision into another: a
// list of (skip, cut, insert) steps over the base's bytes, as uvarints
// and the inserted bytes,
//
//	uvarint steps | steps × (uvarint skip | uvarint cut | uvarint len | bytes)
//
// where skip counts the base's bytes kept since the previous step, cut
// the base's bytes removed here and bytes those put in their place. The
// edits come from a line diff (gopls' algorithm, through go-udiff), whose
// cost is bounded however different the two texts are.

// makeDelta returns the delta from base to content.
func makeDelta(base, content []byte) []byte {
	edits := udiff.Lines(string(base), string(content))
	b := binary.AppendUvarint(make([]byte, 0, 64), uint64(len(edits)))
	prev := 0
	for _, e := range edits {
		b = binary.AppendUvarint(b, uint64(e.Start-prev))
		b = binary.AppendUvarint(b, uint64(e.End-e.Start))
		b = binary.AppendUvarint(b, uint64(len(e.New)))
		b = append(b, e.New...)
		prev = e.End
	}
	return b
}

var errBadDelta = errors.New("a delta that does not fit its base (damaged)")

// applyDelta applies a delta to base; the result must be size bytes.
func applyDelta(base, delta []byte, size int64) ([]byte, error) {
	out := make([]byte, 0, size)
	n, k := binary.Uvarint(delta)
	if k <= 0 {
		return nil, errBadDelta
	}
	delta = delta[k:]
	pos := uint64(0)
	for ; n > 0; n-- {
		var v [3]uint64
		for i := range v {
			x, k := binary.Uvarint(delta)
			if k <= 0 {
				return nil, errBadDelta
			}
			v[i], delta = x, delta[k:]
		}
		skip, cut, ins := v[0], v[1], v[2]
		if skip > uint64(len(base))-pos || cut > uint64(len(base))-pos-skip || ins > uint64(len(delta)) {
			return nil, errBadDelta
		}
		out = append(out, base[pos:pos+skip]...)
		out = append(out, delta[:ins]...)
		pos += skip + cut
		delta = delta[ins:]
	}
	out = append(out, base[pos:]...)
	if len(delta) != 0 || int64(len(out)) != size {
		return nil, errBadDelta
	}
	return out, nil
}
