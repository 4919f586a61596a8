package render

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/vault"
)

// The commands that are not operation rows: init, trust, backup.

// Init prints what init created in the vault at root, and on stderr what
// to do with markdown and attachments it found outside wiki/.
func Init(o *Output, root string, created []string, outside vault.Outside) {
	if len(created) == 0 {
		o.Printf("%s is already a vault; nothing to create\n", root)
	} else {
		o.Printf("created vault %s\n", root)
		for _, p := range created {
			o.Printf("  %s\n", p)
		}
	}
	if outside.Count > 0 {
		o.Note("%s", outsideHint(root, outside))
	}
	if outside.Attachments > 0 {
		o.Note("%s", attachmentHint(root, outside))
	}
}

// outsideHint tells what to do with markdown files init found outside
// wiki/ (an Obsidian vault's notes at its top): synapse reads pages only
// under wiki/.
func outsideHint(root string, out vault.Outside) string {
	n := plural(out.Count, "markdown file", "markdown files")
	if out.Partial {
		n = "at least " + n
	}
	var folders []string
	top := false
	for _, f := range out.Folders {
		if f == "." {
			top = true
			continue
		}
		folders = append(folders, f)
	}
	var where []string
	if len(folders) > 0 {
		where = append(where, "in "+strings.Join(folders, "/, ")+"/")
	}
	if top {
		where = append(where, "at the top of the vault")
	}
	hint := fmt.Sprintf("note: %s %s (e.g. %s) are outside wiki/, and synapse reads pages only under wiki/: they are not indexed, searched or linked.\n",
		n, strings.Join(where, " and "), strings.Join(out.Examples, ", "))
	hint += "  To make them pages, move them into wiki/"
	if len(folders) > 0 {
		args := make([]string, len(folders))
		for i, f := range folders {
			args[i] = shellArg(f)
		}
		hint += fmt.Sprintf(" (cd %s && mv %s wiki/", shellArg(root), strings.Join(args, " "))
		if top {
			hint += ", and the notes at the top one by one: schema.md and purpose.md stay"
		}
		hint += ")"
	} else {
		hint += " one by one (schema.md and purpose.md stay at the top)"
	}
	hint += ", then run synapse reindex; Obsidian opened on the same folder still finds them, and [[links]] by name keep working.\n"
	hint += "  Or keep them apart and give the wiki a folder of its own: synapse init " + shellArg(root+"-wiki")
	return hint
}

// attachmentHint tells what to do with folders of files (images, PDFs)
// outside wiki/ and raw/: synapse finds a linked file (![[pic.png]]) only
// under wiki/ or raw/, so it reports such links as missing files until
// the folder moves into raw/assets/ (or wiki/).
func attachmentHint(root string, out vault.Outside) string {
	args := make([]string, len(out.AttachmentFolders))
	for i, f := range out.AttachmentFolders {
		args[i] = shellArg(f)
	}
	return fmt.Sprintf("note: %s in %s/ %s outside wiki/ and raw/, where synapse finds linked files: links to them (![[file.png]]) are reported as missing files.\n"+
		"  Move the %s into %s/ (cd %s && mv %s %s/); links by name then reach them, and Obsidian finds them there too.",
		plural(out.Attachments, "file", "files"), strings.Join(out.AttachmentFolders, "/, "), map[bool]string{true: "is", false: "are"}[out.Attachments == 1],
		map[bool]string{true: "folder", false: "folders"}[len(args) == 1], vault.AssetsDir, shellArg(root), strings.Join(args, " "), vault.AssetsDir)
}

// shellArg quotes s for a shell when it needs it.
func shellArg(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '~' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Trust prints whether a vault's config is trusted and what in it needs
// trust.
func Trust(o *Output, st *vault.TrustState) {
	switch st.State {
	case vault.TrustNone:
		o.Printf("%s has no %s: nothing to trust\n", st.Vault, st.Config)
		return
	case vault.TrustTrusted:
		o.Printf("trusted: %s of %s (sha256 %.12s…, since %s)\n", st.Config, st.Vault, st.SHA256, st.TrustedAt)
	case vault.TrustChanged:
		o.Printf("changed since trusted: %s of %s (now sha256 %.12s…, trusted %.12s… on %s); run `synapse trust` again to use it\n",
			st.Config, st.Vault, st.SHA256, st.TrustedSHA256, st.TrustedAt)
	default:
		o.Printf("not trusted: %s of %s (sha256 %.12s…); run `synapse trust` to use it\n", st.Config, st.Vault, st.SHA256)
	}
	if len(st.Settings) == 0 {
		o.Printf("  it holds no setting that needs trust\n")
	}
	for _, s := range st.Settings {
		o.Printf("  %s\n", s)
	}
	o.Note("record: %s", st.Record)
}

// Backup prints what a backup wrote.
func Backup(o *Output, out *ops.BackupOut) {
	o.Printf("wrote %s: %s, %s (%s compressed)\n", out.Archive, plural(out.Files, "file", "files"), humanBytes(out.Bytes), humanBytes(out.ArchiveBytes))
	for _, s := range out.Skipped {
		o.Note("skipped %s", s)
	}
}

// BackupProgress draws a backup's progress on a terminal stderr (nil
// elsewhere).
func (o *Output) BackupProgress() func(ops.BackupProgress) {
	if !o.etty {
		return nil
	}
	var mu sync.Mutex
	var last time.Time
	return func(p ops.BackupProgress) {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(last) < 80*time.Millisecond && p.Files != p.TotalFiles {
			return
		}
		last = time.Now()
		o.mu.Lock()
		o.drawn = true
		fmt.Fprintf(o.ew, "\r\033[Kbackup %d/%d files, %s of %s", p.Files, p.TotalFiles, humanBytes(p.Bytes), humanBytes(p.TotalBytes))
		o.mu.Unlock()
	}
}
