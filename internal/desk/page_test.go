package desk

import "testing"

// Wikilinks read as their label in bold; code shows the syntax as written.
func TestBoldLinks(t *testing.T) {
	cases := []struct{ in, want string }{
		{"See [[Core plugins|core plugin]] and [[Canvas]].", "See **core plugin** and **Canvas**."},
		{"[[Sync#Set up]] ![[diagram.png]]", "**Sync › Set up** **[embedded: diagram.png]**"},
		{"`[[Example]]` displays as [[Example]]", "`[[Example]]` displays as **Example**"},
		{"```\n[[Kept]]\n```\n[[Out]]", "```\n[[Kept]]\n```\n**Out**"},
	}
	for _, c := range cases {
		if got := boldLinks(c.in, true); got != c.want {
			t.Errorf("boldLinks(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := boldLinks("See [[Core plugins|core plugin]].", false); got != "See core plugin." {
		t.Errorf("plain: %q", got)
	}
}
