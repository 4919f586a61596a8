package ops

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/history"
	"github.com/synapse-wiki/synapse/vault"
)

// Backup (docs/history.md): one .tar.gz of everything that matters in a
// vault, restorable with `tar x` and `synapse reindex`. It holds the
// vault's files — wiki/, raw/, schema.md, purpose.md, .obsidian/, the
// review journal and every other file and folder at the top — and, of
// .synapse/, the page history, the configuration and its .gitignore. It
// never holds what is derived or private: the store (rebuilt by reindex),
// the token, the server's socket and pid file. A .git folder is left out:
// a repository is a backup of its own, and often far larger than the
// vault. Symlinks are archived as symlinks (never followed); named pipes,
// sockets and devices are skipped and listed.

// BackupOut is what a backup wrote.
type BackupOut struct {
	// Archive is the archive's absolute path.
	Archive string `json:"archive"`
	// Files and Bytes count the files archived and their bytes (before
	// compression); ArchiveBytes is the archive's size.
	Files        int   `json:"files"`
	Bytes        int64 `json:"bytes"`
	ArchiveBytes int64 `json:"archive_bytes"`
	// Skipped lists what was not archived: special files, files that
	// vanished or could not be read meanwhile (vault paths, with why).
	Skipped []string `json:"skipped,omitempty"`
}

// BackupProgress is the progress of a backup: files and bytes archived
// so far of the totals.
type BackupProgress struct {
	Files, TotalFiles int
	Bytes, TotalBytes int64
}

// backupKeep lists what of .synapse/ a backup holds.
var backupKeep = []string{vault.StateDir + "/.gitignore", vault.ConfigFile, history.Dir, keptIDsFile}

// Backup writes the vault v to the gzip-compressed tar archive dst,
// atomically (a temporary file beside it, renamed once complete and
// flushed). progress, when set, is called as files are archived.
//
// Errors: invalid (dst inside wiki/ or raw/, where it would become part
// of the vault, or not ending in .tar.gz / .tgz), internal (I/O).
func Backup(ctx context.Context, v *vault.Vault, dst string, progress func(BackupProgress)) (*BackupOut, error) {
	abs, err := backupTarget(v, dst)
	if err != nil {
		return nil, err
	}
	files, skipped, err := backupFiles(v, abs)
	if err != nil {
		return nil, err
	}
	out := &BackupOut{Archive: abs, Skipped: skipped}
	var total int64
	for _, f := range files {
		total += f.size
	}
	tmp, err := os.CreateTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".*.tmp")
	if err != nil {
		return nil, errs.Wrap(errs.Internal, err, "create %s: %v", abs, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	zw, _ := gzip.NewWriterLevel(tmp, gzip.DefaultCompression)
	tw := tar.NewWriter(zw)
	p := BackupProgress{TotalFiles: len(files), TotalBytes: total}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := archiveFile(tw, v, f)
		if err != nil {
			var skip *skipError
			if errors.As(err, &skip) {
				out.Skipped = append(out.Skipped, f.rel+": "+skip.why)
				continue
			}
			return nil, errs.Wrap(errs.Internal, err, "archive %s: %v", f.rel, err)
		}
		out.Files++
		out.Bytes += n
		p.Files, p.Bytes = p.Files+1, p.Bytes+f.size
		if progress != nil {
			progress(p)
		}
	}
	err = tw.Close()
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if err == nil {
		err = tmp.Close()
	}
	if err == nil {
		err = os.Rename(tmp.Name(), abs)
	}
	if err != nil {
		return nil, errs.Wrap(errs.Internal, err, "write %s: %v", abs, err)
	}
	done = true
	syncDirOf(abs)
	if st, err := os.Stat(abs); err == nil {
		out.ArchiveBytes = st.Size()
	}
	return out, nil
}

// backupTarget checks the archive's path and makes it absolute.
func backupTarget(v *vault.Vault, dst string) (string, error) {
	if strings.TrimSpace(dst) == "" {
		return "", errs.E(errs.Invalid, "give the archive to write, e.g. synapse backup ~/wiki-backup.tar.gz")
	}
	abs, err := filepath.Abs(dst)
	if err != nil {
		return "", errs.Wrap(errs.Invalid, err, "archive path %q: %v", dst, err)
	}
	if !strings.HasSuffix(abs, ".tar.gz") && !strings.HasSuffix(abs, ".tgz") {
		return "", errs.E(errs.Invalid, "the archive %s must end in .tar.gz (or .tgz): it is a gzip-compressed tar file", dst)
	}
	real := abs
	if d, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		real = filepath.Join(d, filepath.Base(abs))
	}
	root := v.Root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	for _, inside := range []string{vault.WikiDir, "raw"} {
		dir := filepath.Join(root, filepath.FromSlash(inside))
		if real == dir || strings.HasPrefix(real, dir+string(filepath.Separator)) {
			return "", errs.E(errs.Invalid, "the archive %s would be inside %s/, where it would become part of the vault; write it elsewhere (outside the vault is best)", dst, inside)
		}
	}
	if st, err := os.Stat(filepath.Dir(abs)); err != nil || !st.IsDir() {
		return "", errs.E(errs.Invalid, "the folder of the archive %s does not exist", dst)
	}
	return abs, nil
}

// backupFile is a file (or symlink) to archive.
type backupFile struct {
	rel  string // vault path
	size int64
	mode fs.FileMode
}

// backupFiles lists what a backup archives, in path order, skipping the
// archive itself (and its temporary file) and listing special files as
// skipped.
func backupFiles(v *vault.Vault, archive string) ([]backupFile, []string, error) {
	var files []backupFile
	var skipped []string
	err := filepath.WalkDir(v.Root, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(v.Root, p)
		rel = filepath.ToSlash(rel)
		if err != nil {
			if rel != "." {
				skipped = append(skipped, rel+": "+err.Error())
				return nil
			}
			return err
		}
		if rel == "." {
			return nil
		}
		if !backupWanted(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			files = append(files, backupFile{rel: rel, mode: fs.ModeDir})
			return nil
		}
		if p == archive || (filepath.Dir(p) == filepath.Dir(archive) && strings.HasPrefix(d.Name(), "."+filepath.Base(archive)+".")) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			skipped = append(skipped, rel+": "+err.Error())
			return nil
		}
		switch {
		case info.Mode().IsRegular():
			files = append(files, backupFile{rel: rel, size: info.Size(), mode: info.Mode()})
		case info.Mode()&fs.ModeSymlink != 0:
			files = append(files, backupFile{rel: rel, mode: info.Mode()})
		default:
			skipped = append(skipped, rel+": not a regular file (a named pipe, socket or device)")
		}
		return nil
	})
	if err != nil {
		return nil, nil, errs.Wrap(errs.Internal, err, "list the vault: %v", err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	return files, skipped, nil
}

// backupWanted reports whether the vault path rel is archived (a folder:
// walked).
func backupWanted(rel string, dir bool) bool {
	if rel == ".git" {
		return false
	}
	if rel != vault.StateDir && !strings.HasPrefix(rel, vault.StateDir+"/") {
		return true
	}
	if rel == vault.StateDir {
		return true
	}
	for _, k := range backupKeep {
		if rel == k || strings.HasPrefix(rel, k+"/") || (dir && strings.HasPrefix(k, rel+"/")) {
			return true
		}
	}
	return false
}

// skipError is a file that could not be archived and is listed instead.
type skipError struct{ why string }

func (e *skipError) Error() string { return e.why }

// archiveFile writes f's header and bytes and returns the bytes written.
// A regular file is opened without following a symlink and checked to be
// the one listed; a file gone or changed into something else is skipped.
func archiveFile(tw *tar.Writer, v *vault.Vault, f backupFile) (int64, error) {
	abs := v.Abs(f.rel)
	switch {
	case f.mode.IsDir():
		st, err := os.Lstat(abs)
		if err != nil || !st.IsDir() {
			return 0, &skipError{"gone or no longer a folder"}
		}
		return 0, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: f.rel + "/", Mode: int64(st.Mode().Perm()), ModTime: st.ModTime(), Format: tar.FormatPAX})
	case f.mode&fs.ModeSymlink != 0:
		target, err := os.Readlink(abs)
		if err != nil {
			return 0, &skipError{"gone or no longer a symlink"}
		}
		st, err := os.Lstat(abs)
		if err != nil {
			return 0, &skipError{err.Error()}
		}
		return 0, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: f.rel, Linkname: target, Mode: 0o777, ModTime: st.ModTime(), Format: tar.FormatPAX})
	}
	fh, err := os.OpenFile(abs, os.O_RDONLY|backupOpen, 0)
	if err != nil {
		return 0, &skipError{"cannot be opened: " + err.Error()}
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return 0, &skipError{"no longer a regular file"}
	}
	h := &tar.Header{Typeflag: tar.TypeReg, Name: f.rel, Mode: int64(st.Mode().Perm()), Size: st.Size(), ModTime: st.ModTime(), Format: tar.FormatPAX}
	if err := tw.WriteHeader(h); err != nil {
		return 0, err
	}
	n, err := io.CopyN(tw, fh, st.Size())
	if err != nil {
		return n, fmt.Errorf("%s changed while it was archived: %w", f.rel, err)
	}
	return n, nil
}

// syncDirOf flushes the folder of path (best effort: the archive is
// complete and flushed already).
func syncDirOf(path string) {
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
