package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestSkill_ReferenceSection: every verb of the reference prints as its
// own section, well under the 16 KB an agent's tool output holds, and
// holding that verb's heading and no other verb's.
func TestSkill_ReferenceSection(t *testing.T) {
	_, ok, verbs := referenceSection(skillReference, "no such verb")
	if ok {
		t.Fatal("an unknown verb printed a section")
	}
	if len(verbs) < 30 || !strings.Contains(strings.Join(verbs, ","), ",page write,") {
		t.Fatalf("verbs read from the reference: %q", verbs)
	}
	for _, v := range verbs {
		sec, ok, _ := referenceSection(skillReference, v)
		if !ok {
			t.Errorf("%s: no section", v)
			continue
		}
		if len(sec) > 8<<10 {
			t.Errorf("%s: section is %d bytes", v, len(sec))
		}
		if !bytes.HasPrefix(sec, []byte("#### `synapse "+v)) || !bytes.HasSuffix(sec, []byte("\n")) || bytes.HasSuffix(sec, []byte("\n\n")) {
			t.Errorf("%s: section is %q", v, sec)
		}
		if n := bytes.Count(sec, []byte("#### ")); n != 1 && !strings.Contains(v, " ") {
			// a one-word verb may be a group only when it has no own section
			t.Errorf("%s: %d headings", v, n)
		}
	}
	for _, group := range []string{"page", "review", "graph", "source", "skill"} {
		sec, ok, _ := referenceSection(skillReference, group)
		if !ok || bytes.Count(sec, []byte("#### `synapse "+group+" ")) < 2 || len(sec) > 16<<10 {
			t.Errorf("group %s: %d bytes, found %v", group, len(sec), ok)
		}
		if bytes.Contains(sec, []byte("<!--")) || bytes.Contains(sec, []byte("\n## ")) {
			t.Errorf("group %s runs past the commands", group)
		}
	}
	if sec, ok, _ := referenceSection(skillReference, "write_page"); !ok || !bytes.HasPrefix(sec, []byte("#### `synapse page write ")) {
		t.Errorf("the MCP tool write_page: %q", sec)
	}
	if _, ok, _ := referenceSection(skillReference, "no_such_tool"); ok {
		t.Error("an unknown tool name printed a section")
	}
	if sec, _, _ := referenceSection(skillReference, "context"); bytes.Contains(sec, []byte("END GENERATED")) {
		t.Error("the last section holds the end marker")
	}
}

func TestSkill_HeadingVerb(t *testing.T) {
	for in, want := range map[string]string{
		"page write TITLE [--file FILE] --json`\n": "page write",
		"review bulk-resolve --action ACTION`":     "review bulk-resolve",
		"init [DIR] --json`":                       "init",
		"status --json`":                           "status",
		"reindex`":                                 "reindex",
		"backup FILE.tar.gz [--json]`":             "backup",
	} {
		if got := headingVerb(in); got != want {
			t.Errorf("headingVerb(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSkill_PointsToOneVerb: every `synapse skill print --reference` the
// skill tells an agent to run names a verb the reference has, so what
// it prints is one section, not the whole reference (over what a tool
// output holds).
func TestSkill_PointsToOneVerb(t *testing.T) {
	n := 0
	for _, l := range append(skillLines(string(skillMD)), inlineCommands(string(skillMD))...) {
		words, err := shellWords(l)
		if err != nil || len(words) < 3 || words[1] != "skill" || words[2] != "print" || !slices.Contains(words, "--reference") {
			continue
		}
		n++
		var verb []string
		for _, w := range words[3:] {
			if !strings.HasPrefix(w, "-") {
				verb = append(verb, w)
			}
		}
		sec, ok, _ := referenceSection(skillReference, strings.Join(verb, " "))
		if len(verb) == 0 || !ok || len(sec) > 16<<10 {
			t.Errorf("SKILL.md runs %q: it prints %d bytes (a verb the reference has: %v)", l, len(sec), ok)
		}
	}
	if n == 0 {
		t.Error("SKILL.md does not say how to print one verb's reference")
	}
}
