package ops

import (
	"encoding/json"

	"github.com/synapse-wiki/synapse/vault"
)

// A page keeps its id when it moves (docs/pages.md#moving-and-renaming).
// The store holds the id with the page's record; since the store is
// rebuilt from the files, the ids that moved pages keep are also written
// to keptIDsFile (vault path → id), which a rebuild reads
// (index.Indexer.KeptIDs). One entry per id: the page's newest path.

// keptIDsFile lists the ids moved pages keep.
const keptIDsFile = vault.StateDir + "/ids.json"

// readKeptIDs reads keptIDsFile (nil when there is none or it does not
// parse: ids then come from paths, as for any page).
func readKeptIDs(v *vault.Vault) map[string]string {
	data, err := readPrivate(v, keptIDsFile)
	if err != nil || data == nil {
		return nil
	}
	var m map[string]string
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	return m
}

// keepMovedID records that the page at path keeps id.
func keepMovedID(v *vault.Vault, path, id string) error {
	m := readKeptIDs(v)
	if m[path] == id {
		return nil
	}
	if m == nil {
		m = map[string]string{}
	}
	for p, kept := range m {
		if kept == id {
			delete(m, p)
		}
	}
	m[path] = id
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return writePrivate(v, keptIDsFile, data)
}
