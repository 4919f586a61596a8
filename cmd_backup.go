package main

import (
	"github.com/synapse-wiki/synapse/internal/render"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/urfave/cli/v2"
)

func init() {
	extraCommands = append(extraCommands, &cli.Command{
		Name:      "backup",
		Usage:     "Write the vault to one .tar.gz: its files, the page history and the config, never the derived store",
		UsageText: "synapse backup FILE.tar.gz [--json]",
		Description: "Archives wiki/, raw/, schema.md, purpose.md, the review journal, .obsidian/ and every other\n" +
			"file at the top of the vault, with .synapse/history/ and .synapse/config.yaml; never the store\n" +
			"(synapse.db), the token, the socket or .git/. Restore: tar -xzf FILE -C DIR && synapse reindex --vault DIR.\n" +
			"Written to a temporary file and renamed when complete; refused inside wiki/ or raw/.",
		Flags:        []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"}},
		OnUsageError: usageError,
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usageError(c, errTooManyArgs(c), false)
			}
			v, err := findVault(globalsOf(c))
			if err != nil {
				return err
			}
			o := render.New(c.App.Writer, c.App.ErrWriter)
			out, err := ops.Backup(c.Context, v, c.Args().First(), o.BackupProgress())
			o.EndProgress()
			if err != nil {
				return err
			}
			if globalsOf(c).json {
				o.JSON(out)
				return nil
			}
			render.Backup(o, out)
			return nil
		},
	})
	extraDocs["backup"] = verbDoc{
		examples: []example{
			{`synapse backup ~/wiki-2026-05-01.tar.gz`, "everything that matters in the vault, in one file"},
			{`synapse backup /mnt/usb/wiki.tar.gz --json`, "the archive's path, files and bytes as JSON; restore with tar -xzf and synapse reindex"},
		},
	}
}
