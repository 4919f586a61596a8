//go:build !linux

package index

import "time"

// fineRacyWindow: see folderRacy (Windows' 15.6 ms system tick).
const fineRacyWindow = int64(20 * time.Millisecond)
