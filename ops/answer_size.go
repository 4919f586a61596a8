package ops

import "encoding/json"

// MaxListBytes bounds the JSON of a list answer whose items can be large
// (a source cited by many pages): it fits an agent's context whatever the
// limit asked for. The items past the bound are left out; the answer's
// total still counts them, and --offset reads on.
const MaxListBytes = 16 << 10

// fitList drops items from the end of *list until whole (the answer
// holding the list) marshals to at most MaxListBytes, keeping at least one
// item; it reports whether it dropped any.
func fitList[T any](whole any, list *[]T) bool {
	cut := false
	for len(*list) > 1 {
		b, err := json.Marshal(whole)
		if err != nil || len(b) <= MaxListBytes {
			break
		}
		n := len(*list) * MaxListBytes / len(b)
		*list, cut = (*list)[:min(n, len(*list)-1)], true
	}
	return cut
}
