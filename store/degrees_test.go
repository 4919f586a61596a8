package store

import "testing"

// TestAdjDegrees: the degree table answers AdjDeg once complete, PutAdj
// and DeleteAdj keep it exact, a store without it (indexed before it
// existed) reads the records' headers until BuildAdjDegrees completes it,
// and ResetDerived drops it.
func TestAdjDegrees(t *testing.T) {
	s := openTestStore(t)
	put := func(tx *Tx, doc, deg uint32) {
		t.Helper()
		if err := tx.PutAdj(doc, &AdjRec{Type: "concept", Deg: deg}); err != nil {
			t.Fatal(err)
		}
	}
	want := func(tx *Tx, complete bool, degs map[uint32]uint32) {
		t.Helper()
		if got := tx.AdjDegreesComplete(); got != complete {
			t.Fatalf("complete = %v, want %v", got, complete)
		}
		for doc := uint32(1); doc < 3000; doc++ {
			if got := tx.AdjDeg(doc); got != degs[doc] {
				t.Fatalf("AdjDeg(%d) = %d, want %d", doc, got, degs[doc])
			}
		}
	}
	degs := map[uint32]uint32{1: 3, 1023: 1, 1024: 7, 2500: 2}
	err := s.Update(func(tx *Tx) error {
		// no table: headers
		for d, n := range degs {
			put(tx, d, n)
		}
		want(tx, false, degs)
		if err := tx.BuildAdjDegrees(); err != nil {
			return err
		}
		want(tx, true, degs)
		// kept exact
		put(tx, 1024, 8)
		put(tx, 5, 1)
		if err := tx.DeleteAdj(1023); err != nil {
			return err
		}
		degs[1024], degs[5] = 8, 1
		delete(degs, 1023)
		want(tx, true, degs)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// as stored, in the next transaction
	_ = s.View(func(tx *Tx) error { want(tx, true, degs); return nil })
	err = s.Update(func(tx *Tx) error {
		if err := tx.PutAdjDegrees([]uint32{0, 4, 0, 9}); err != nil {
			return err
		}
		want(tx, true, map[uint32]uint32{1: 4, 3: 9})
		if err := tx.ResetDerived(); err != nil {
			return err
		}
		want(tx, false, nil)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
