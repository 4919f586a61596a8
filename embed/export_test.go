package embed

// SetExactLimit sets the size above which the scan is prefiltered and
// returns a func that restores it (benchmarks compare both).
func SetExactLimit(n int) (restore func()) {
	old := exactLimit
	exactLimit = n
	return func() { exactLimit = old }
}
