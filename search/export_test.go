package search

// SetEnglishOnly makes every page indexed (and every snippet made) while
// it is on English, whatever its language: the evaluation's "no
// stemming beyond English" reference. It returns a function that restores
// the previous setting. Tests that use it must not run in parallel.
func SetEnglishOnly(on bool) (restore func()) {
	old := englishOnly
	englishOnly = on
	return func() { englishOnly = old }
}
