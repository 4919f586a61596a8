package main

import (
	"bytes"
	"regexp"
	"strings"
)

// referenceVerbRE matches one word of a verb in a command heading of the
// reference: lower-case letters and dashes, so "page", "bulk-resolve".
var referenceVerbRE = regexp.MustCompile(`^[a-z][a-z-]*$`)

// referenceSection is a verb's section of the generated reference: its
// "#### `synapse VERB …`" heading and the text up to the next heading
// (or the end of the generated block). A group ("page") gives the
// sections of all its verbs, an MCP tool's name (write_page) the section
// of the verb it runs. verbs are the verbs the reference
// documents, in its order, for the usage error when verb is none of them.
func referenceSection(ref []byte, verb string) (section []byte, found bool, verbs []string) {
	const head = "#### `synapse "
	var out []byte
	cur, in := "", false
	for _, line := range bytes.SplitAfter(ref, []byte("\n")) {
		s := string(line)
		if strings.HasPrefix(s, "#") || strings.HasPrefix(s, "<!--") {
			in = false
			if strings.HasPrefix(s, head) {
				cur = headingVerb(strings.TrimPrefix(s, head))
				verbs = append(verbs, cur)
				in = cur == verb || strings.HasPrefix(cur, verb+" ")
				if in && len(out) > 0 {
					out = append(bytes.TrimRight(out, "\n"), "\n\n"...)
				}
			}
		}
		if in {
			out = append(out, line...)
		}
	}
	if len(out) == 0 {
		// an MCP tool's name (write_page) finds the verb it runs
		for _, v := range verbs {
			if sec, ok, _ := referenceSection(ref, v); ok && strings.Contains(verb, "_") && bytes.Contains(sec, []byte("MCP tool: `"+verb+"(")) {
				return sec, true, verbs
			}
		}
		return nil, false, verbs
	}
	return append(bytes.TrimRight(out, "\n"), '\n'), true, verbs
}

// headingVerb is the verb of a command heading's usage line: its leading
// words up to the first argument or flag ("page write TITLE [--file…" is
// "page write").
func headingVerb(usage string) string {
	var words []string
	for _, w := range strings.Fields(usage) {
		w = strings.TrimSuffix(w, "`")
		if !referenceVerbRE.MatchString(w) {
			break
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}
