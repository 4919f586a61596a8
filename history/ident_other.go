//go:build !linux

package history

import "io/fs"

// packIdent is a pack file's identity and state (none here: every Edit
// reads the pack).
type packIdent struct{ size int64 }

func identOf(fs.FileInfo) (packIdent, bool) { return packIdent{}, false }
