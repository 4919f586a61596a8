package main

import (
	"fmt"
	"sync"
	"time"

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
			o := newOutput(c.App.Writer, c.App.ErrWriter)
			out, err := ops.Backup(c.Context, v, c.Args().First(), o.backupProgress())
			o.endProgress()
			if err != nil {
				return err
			}
			if globalsOf(c).json {
				data, _ := ops.MarshalJSON(out)
				o.w.Write(data)
				return nil
			}
			o.printf("wrote %s: %s, %s (%s compressed)\n", out.Archive, plural(out.Files, "file", "files"), humanBytes(out.Bytes), humanBytes(out.ArchiveBytes))
			for _, s := range out.Skipped {
				o.note("skipped %s", s)
			}
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

// backupProgress draws a backup's progress on a terminal stderr (nil
// elsewhere).
func (o *output) backupProgress() func(ops.BackupProgress) {
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
