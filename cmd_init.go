package main

import (
	"runtime"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/render"
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
				o := render.New(c.App.Writer, c.App.ErrWriter)
				e, err := ops.OpenEnv(c.Context, v, ops.OpenOptions{Holder: "synapse init", Progress: o.Progress()})
				if err != nil {
					return err
				}
				defer e.Close()
				if created == nil {
					created = []string{}
				}
				outside := vault.MarkdownOutsideWiki(v.Root)
				if globalsOf(c).json {
					res := map[string]any{"vault": v.Root, "created": created}
					if outside.Count > 0 || outside.Attachments > 0 {
						res["markdown_outside_wiki"] = outside
					}
					o.JSON(res)
					return nil
				}
				render.Init(o, v.Root, created, outside)
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
				o := render.New(c.App.Writer, c.App.ErrWriter)
				if globalsOf(c).json {
					return o.JSON(VersionOut{Version: version, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH})
				}
				o.Printf("synapse %s\n", version)
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
