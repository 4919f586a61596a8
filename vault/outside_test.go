package vault

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestOutside: markdown outside wiki/ is found by folder, a folder of
// other files with no markdown is an attachments folder, and a linked
// file's name is found there; wiki/, raw/, .synapse/ and hidden folders
// are never looked into.
func TestOutside(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{
		"Notes/a.md", "Notes/b.md", "Notes/inline.png", "top.md", "schema.md", "README.md",
		"attachments/Pic.PNG", "attachments/doc.pdf", "media/x/clip.mp4",
		"wiki/in.md", "wiki/pic.png", "raw/assets/other.png", ".obsidian/app.json", ".hidden/pic.png",
	} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := MarkdownOutsideWiki(root)
	want := Outside{Count: 3, Folders: []string{".", "Notes"}, Examples: got.Examples,
		AttachmentFolders: []string{"attachments", "media"}, Attachments: 3}
	if !reflect.DeepEqual(got, want) || len(got.Examples) != 3 {
		t.Errorf("MarkdownOutsideWiki = %+v, want %+v", got, want)
	}
	found := FilesOutside(root, []string{"pic.png", "clip.mp4", "other.png", "none.png"})
	if want := map[string]string{"pic.png": "attachments/Pic.PNG", "clip.mp4": "media/x/clip.mp4"}; !reflect.DeepEqual(found, want) {
		t.Errorf("FilesOutside = %v, want %v", found, want)
	}
}
