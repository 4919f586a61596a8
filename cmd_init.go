package main

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/vault"
	"github.com/urfave/cli/v2"
)

func init() {
	extraCommands = append(extraCommands,
		&cli.Command{
			Name:      "init",
			Usage:     "Create a vault (running it again is harmless)",
			UsageText: "synapse init [DIR]",
			Description: "Lays out raw/sources/, raw/assets/, wiki/ (with index.md, log.md, overview.md and\n" +
				"folders for typed pages), schema.md, purpose.md and .synapse/. Existing files are kept.\n" +
				"Pages are the *.md files under wiki/: markdown found elsewhere in DIR (an Obsidian vault's\n" +
				"notes at its top) is reported on stderr with how to make it pages (move it into wiki/).",
			Flags:        []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"}},
			OnUsageError: usageError,
			Action: func(c *cli.Context) error {
				dir := c.Args().First()
				if dir == "" {
					dir = "."
				}
				if c.NArg() > 1 {
					return usageError(c, errTooManyArgs(c), false)
				}
				v, created, err := vault.Init(dir)
				if err != nil {
					return err
				}
				// create the store and index what is already there
				e, err := ops.OpenEnv(c.Context, v, ops.OpenOptions{Holder: "synapse init", Progress: newOutput(c.App.Writer, c.App.ErrWriter).progress()})
				if err != nil {
					return err
				}
				defer e.Close()
				o := newOutput(c.App.Writer, c.App.ErrWriter)
				if created == nil {
					created = []string{}
				}
				outside := vault.MarkdownOutsideWiki(v.Root)
				if globalsOf(c).json {
					res := map[string]any{"vault": v.Root, "created": created}
					if outside.Count > 0 || outside.Attachments > 0 {
						res["markdown_outside_wiki"] = outside
					}
					data, _ := ops.MarshalJSON(res)
					o.w.Write(data)
					return nil
				}
				if len(created) == 0 {
					o.printf("%s is already a vault; nothing to create\n", v.Root)
				} else {
					o.printf("created vault %s\n", v.Root)
					for _, p := range created {
						o.printf("  %s\n", p)
					}
				}
				if outside.Count > 0 {
					o.note("%s", outsideHint(v.Root, outside))
				}
				if outside.Attachments > 0 {
					o.note("%s", attachmentHint(v.Root, outside))
				}
				return nil
			},
		},
		&cli.Command{
			Name:         "version",
			Usage:        "Print the version",
			UsageText:    "synapse version [--json]",
			Flags:        []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the version, Go version and platform as JSON"}},
			OnUsageError: usageError,
			Action: func(c *cli.Context) error {
				if c.NArg() > 0 {
					return errs.E(errs.Invalid, "unexpected argument %q (usage: synapse version [--json])", c.Args().First())
				}
				o := newOutput(c.App.Writer, c.App.ErrWriter)
				if globalsOf(c).json {
					data, err := ops.MarshalJSON(VersionOut{Version: version, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH})
					if err != nil {
						return err
					}
					_, err = o.w.Write(data)
					return err
				}
				o.printf("synapse %s\n", version)
				return nil
			},
		},
	)
}

// VersionOut is the result of `synapse version --json`.
type VersionOut struct {
	Version  string `json:"version"`
	Go       string `json:"go"`       // the Go release it was built with
	Platform string `json:"platform"` // GOOS/GOARCH
}

func errTooManyArgs(c *cli.Context) error {
	return &usageErr{"too many arguments"}
}

type usageErr struct{ msg string }

func (e *usageErr) Error() string { return e.msg }

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
