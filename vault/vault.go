// Package vault knows the on-disk layout of a synapse vault (docs/vault.md): where
// the wiki, the sources and the store live, how a vault is found from a
// flag, the environment or the working directory, and how `synapse init`
// lays one out. It never opens the store.
package vault

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/vaultfs"
)

// Layout names, relative to the vault root, with forward slashes.
const (
	WikiDir      = "wiki"
	SourcesDir   = "raw/sources"
	AssetsDir    = "raw/assets"
	StateDir     = ".synapse"
	DBFile       = ".synapse/synapse.db"
	TokenFile    = ".synapse/token"
	SchemaFile   = "schema.md"
	PurposeFile  = "purpose.md"
	IndexPage    = "wiki/index.md"
	LogPage      = "wiki/log.md"
	OverviewPage = "wiki/overview.md"
	// ReviewJournal is the review queue's journal (one JSON event a line;
	// docs/review.md): in the vault, outside .synapse/, so that whatever
	// carries the vault carries the decisions. It is no page.
	ReviewJournal = "reviews.jsonl"
	// GitAttributesFile is git's per-folder attributes file; init writes
	// GitAttributes into a new one.
	GitAttributesFile = ".gitattributes"
)

// GitAttributes tells git to merge the review journal and wiki/log.md by
// keeping the lines of both sides (its union driver): both files only
// grow at their end, so two machines' decisions and log entries merge
// without a conflict, and the journal's replay sorts its lines out.
const GitAttributes = ReviewJournal + " merge=union\n" + WikiDir + "/log.md merge=union\n"

// EnvVar is the environment variable naming the vault.
const EnvVar = "SYNAPSE_VAULT"

// Vault is an opened vault folder. Root is absolute and clean.
type Vault struct {
	Root string
	// files is the vault's file layer (Files), made when the vault is
	// opened (At) and passed on from here to whatever touches its files.
	files atomic.Pointer[vaultfs.FS]
}

// At is the vault rooted at root (absolute and clean), with its file
// layer: what Open, Find and Init return once they have found the folder.
func At(root string) *Vault {
	v := &Vault{Root: root}
	v.files.Store(vaultfs.New(root))
	return v
}

// Files is the vault's file layer (docs/vault.md#the-file-layer): every
// read and write of the vault's files goes through it. Every user of one
// Vault shares it (the Envs of a server, its indexer, the write path); a
// Vault made without At gets its layer on first use.
func (v *Vault) Files() *vaultfs.FS {
	if f := v.files.Load(); f != nil {
		return f
	}
	v.files.CompareAndSwap(nil, vaultfs.New(v.Root))
	return v.files.Load()
}

// Abs returns the absolute OS path of a vault-relative slash path.
func (v *Vault) Abs(rel string) string {
	return filepath.Join(v.Root, filepath.FromSlash(rel))
}

// Rel returns the vault-relative slash path of an absolute OS path, or an
// error when abs lies outside the vault.
func (v *Vault) Rel(abs string) (string, error) {
	r, err := filepath.Rel(v.Root, abs)
	if err != nil {
		return "", err
	}
	r = filepath.ToSlash(r)
	if r == ".." || strings.HasPrefix(r, "../") {
		return "", fmt.Errorf("%s is outside the vault", abs)
	}
	return r, nil
}

// Open returns the vault rooted at dir, which must hold a .synapse folder.
func Open(dir string) (*Vault, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "vault path %q: %v", dir, err)
	}
	ok, err := hasStateDir(abs)
	if err != nil {
		return nil, err
	}
	if !ok {
		if dir == "~" || strings.HasPrefix(dir, "~/") || strings.HasPrefix(dir, "~"+string(filepath.Separator)) {
			// a quoted ~ (or --vault=~/x) reaches synapse unexpanded
			return nil, errs.E(errs.NotFound, "%s is not a synapse vault: the path %q starts with a literal ~, which only the shell expands (unquoted, and not after --vault=); "+
				"synapse read it as a folder named ~ in the working folder. Give the path in full, e.g. --vault \"$HOME%s\"", abs, dir, strings.TrimPrefix(dir, "~"))
		}
		return nil, errs.E(errs.NotFound, "%s is not a synapse vault (no %s folder); run `synapse init %s` first%s", abs, StateDir, dir, unopenedNote(abs))
	}
	return At(abs), nil
}

// wikiAbove returns the nearest folder at or above cwd that holds a
// wiki/ folder ("" when none does): a wiki synapse has not kept yet.
func wikiAbove(cwd string) string {
	dir, err := filepath.Abs(cwd)
	if err != nil {
		return ""
	}
	for {
		if st, err := os.Stat(filepath.Join(dir, WikiDir)); err == nil && st.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// unopenedNote tells, for a folder that holds a wiki/ but no .synapse/,
// that init keeps what is there.
func unopenedNote(dir string) string {
	if st, err := os.Stat(filepath.Join(dir, WikiDir)); err != nil || !st.IsDir() {
		return ""
	}
	return "; init keeps every file there (it adds only what is missing: " + StateDir + "/, the layout's folders, schema.md, purpose.md, wiki/index.md, log.md, overview.md) and indexes the pages"
}

// hasStateDir reports whether dir holds a .synapse folder. One that is a
// symlink is refused (forbidden), never followed: a vault from elsewhere
// could point it at another user's folder, whose store and config synapse
// would then use.
func hasStateDir(dir string) (bool, error) {
	p := filepath.Join(dir, StateDir)
	st, err := os.Lstat(p)
	switch {
	case err != nil:
		return false, nil
	case st.Mode()&fs.ModeSymlink != 0:
		to, _ := os.Readlink(p)
		return false, errs.E(errs.Forbidden, "%s is a symlink (to %s): synapse never follows %s out of the vault; replace it with a folder (`rm %s && synapse init %s`)", p, to, StateDir, p, dir)
	}
	return st.IsDir(), nil
}

// Find locates the vault: the --vault flag if given, then $SYNAPSE_VAULT,
// then the nearest folder at or above cwd that holds .synapse/.
func Find(flag, env, cwd string) (*Vault, error) {
	if flag != "" {
		return Open(flag)
	}
	if env != "" {
		return Open(env)
	}
	dir, err := filepath.Abs(cwd)
	if err != nil {
		return nil, errs.Wrap(errs.Internal, err, "working directory: %v", err)
	}
	for {
		if ok, err := hasStateDir(dir); err != nil {
			return nil, err
		} else if ok {
			return At(dir), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			if w := wikiAbove(cwd); w != "" {
				return nil, errs.E(errs.NotFound, "no synapse vault here: %s holds %s/ but no %s/ (synapse has not kept it yet): `synapse init %s` makes it one%s", w, WikiDir, StateDir, w, unopenedNote(w))
			}
			return nil, errs.E(errs.NotFound, "no synapse vault here: pass --vault DIR, set %s, or run inside a vault (a folder holding %s/); `synapse init DIR` creates one", EnvVar, StateDir)
		}
		dir = parent
	}
}

// TypeFromPath infers a page type from a vault-relative page path: the
// first folder under wiki/ that names a type folder, else "note". The
// three reserved top files get their reserved type.
func TypeFromPath(rel string) string {
	switch rel {
	case IndexPage:
		return "index"
	case LogPage:
		return "log"
	case OverviewPage:
		return "overview"
	}
	inWiki := strings.TrimPrefix(rel, WikiDir+"/")
	if i := strings.IndexByte(inWiki, '/'); i > 0 {
		first := strings.ToLower(inWiki[:i])
		for t, f := range typeFolders {
			if f == first {
				return t
			}
		}
	}
	return "note"
}

// IsReserved reports whether rel is one of the three synapse-owned top
// files (index.md, log.md, overview.md at the top of wiki/).
func IsReserved(rel string) bool {
	return rel == IndexPage || rel == LogPage || rel == OverviewPage
}

// IsPagePath reports whether a vault-relative path is a wiki page.
func IsPagePath(rel string) bool {
	return strings.HasPrefix(rel, WikiDir+"/") && strings.EqualFold(path.Ext(rel), ".md") && !hasHiddenPart(rel)
}

// IsSourcePath reports whether a vault-relative path is a tracked source.
func IsSourcePath(rel string) bool {
	return strings.HasPrefix(rel, SourcesDir+"/") && !hasHiddenPart(rel)
}

// hasHiddenPart reports whether any path element starts with a dot
// (editor swap files, .obsidian, .git, .trash are never pages or sources).
func hasHiddenPart(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if strings.HasPrefix(part, ".") {
			return true
		}
	}
	return false
}

// IsTempName reports whether a file name looks like an editor's or our
// own temporary file, which the scanner and watcher ignore.
func IsTempName(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~") ||
		strings.HasSuffix(name, ".tmp") || strings.HasSuffix(name, ".swp") ||
		strings.HasPrefix(name, "#")
}

// enclosingVault is the nearest folder above dir (dir itself aside) that
// is a vault (holds a .synapse folder), or "".
func enclosingVault(dir string) string {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if ok, _ := hasStateDir(d); ok {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// Init lays out a vault at dir (created if needed) and returns it with the
// vault-relative paths it created. Existing files are never overwritten, so
// running it twice is harmless. A folder inside another vault is refused
// (conflict): the new vault's files would be pages and sources of both.
func Init(dir string) (*Vault, []string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, errs.Wrap(errs.Invalid, err, "vault path %q: %v", dir, err)
	}
	if st, err := os.Stat(abs); err == nil && !st.IsDir() {
		return nil, nil, errs.E(errs.Invalid, "%s exists and is not a folder", abs)
	}
	if outer := enclosingVault(abs); outer != "" {
		return nil, nil, errs.E(errs.Conflict, "%s is inside the vault %s: a vault there would add its files to that vault's pages and sources; "+
			"create it in a folder outside %s, or work in %s itself", abs, outer, outer, outer)
	}
	v := At(abs)
	var created []string
	dirs := []string{SourcesDir, AssetsDir, WikiDir, StateDir}
	for _, f := range []string{"entities", "concepts", "sources", "synthesis", "comparisons", "queries"} {
		dirs = append(dirs, WikiDir+"/"+f)
	}
	// folders are made through the vault's file layer, which never
	// follows a symlink: a cloned vault whose wiki/ links elsewhere gets
	// nothing written there
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, nil, errs.Wrap(errs.Internal, err, "create %s: %v", abs, err)
	}
	lay := v.Files()
	for _, d := range dirs {
		if d == StateDir {
			if st, err := os.Lstat(v.Abs(d)); err == nil && st.Mode()&fs.ModeSymlink != 0 {
				return nil, nil, errs.E(errs.Forbidden, "%s is a symlink: synapse never follows %s out of the vault; replace it with a folder", v.Abs(d), StateDir)
			} else if err == nil && !st.IsDir() {
				return nil, nil, errs.E(errs.Forbidden, "%s is not a folder (%s); remove it first", d, st.Mode().Type())
			} else if err != nil {
				if err := os.Mkdir(v.Abs(d), 0o700); err != nil {
					return nil, nil, errs.Wrap(errs.Internal, err, "create %s: %v", d, err)
				}
				created = append(created, d+"/")
			}
			continue
		}
		made, err := lay.MkdirAll(d)
		if err != nil {
			code := errs.Internal
			if _, ok := vaultfs.AsRefusal(err); ok {
				code = errs.Forbidden
			}
			return nil, nil, errs.Wrap(code, err, "create %s: %v", d, err)
		}
		if slices.Contains(made, d) {
			created = append(created, d+"/")
		}
	}
	if err := os.Chmod(v.Abs(StateDir), 0o700); err != nil {
		return nil, nil, errs.Wrap(errs.Internal, err, "protect %s: %v", StateDir, err)
	}
	files := []struct{ rel, body string }{
		{StateDir + "/.gitignore", "*\n"},
		{SchemaFile, schemaTemplate},
		{ReviewJournal, ""},
		{GitAttributesFile, GitAttributes},
		{PurposeFile, purposeTemplate},
		{IndexPage, indexTemplate},
		{LogPage, logTemplate},
		{OverviewPage, overviewTemplate},
	}
	for _, f := range files {
		// O_EXCL: an existing name, a symlink (even a dangling one)
		// included, is left alone and never written through
		fh, err := os.OpenFile(v.Abs(f.rel), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err == nil {
			_, err = fh.WriteString(f.body)
			if cerr := fh.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return nil, nil, errs.Wrap(errs.Internal, err, "create %s: %v", f.rel, err)
		}
		created = append(created, f.rel)
	}
	return v, created, nil
}
