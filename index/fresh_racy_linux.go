//go:build linux

package index

import "time"

// fineRacyWindow: see folderRacy (a jiffy at HZ=100).
const fineRacyWindow = int64(10 * time.Millisecond)
