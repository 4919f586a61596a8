package markdown

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// jsonValue decodes s as MCP and REST inputs are decoded (UseNumber).
func jsonValue(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestFrontmatter_NumbersExact: a json.Number is written with its digits
// and compares with a file's number exactly as an integer, as float64
// otherwise; a string is never the same as a number.
func TestFrontmatter_NumbersExact(t *testing.T) {
	fm, err := ParseFrontmatter("big: 12345678901234567890\npi: 3.14159265358979323846\nhex: 0x1F\nsep: 1_000\nf: 12.0\ns: \"12\"\nl: [1, 9007199254740993]\nm: {a: 18446744073709551615}\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key, json string
		same      bool
	}{
		{"big", "12345678901234567890", true},
		{"big", "12345678901234567891", false},
		{"big", `"12345678901234567890"`, true}, // as get_page returns it
		{"big", "1.2345678901234567e19", true},  // a float64 reading of it: the file keeps its digits
		{"pi", "3.141592653589793", true},       // what a float64 reader got
		{"pi", "3.14159265358979323846", true},
		{"pi", "3.1415926535", false},
		{"hex", "31", true},
		{"sep", "1000", true},
		{"f", "12", true},
		{"s", "12", false},
		{"l", "[1, 9007199254740993]", true},
		{"l", "[1, 9007199254740992]", false},
		{"m", `{"a": 18446744073709551615}`, true},
		{"m", `{"a": 18446744073709551614}`, false},
		{"m", `{"a": 18446744073709551615, "b": 1}`, false},
	} {
		if got := fm.Same(c.key, jsonValue(t, c.json)); got != c.same {
			t.Errorf("Same(%s, %s) = %v", c.key, c.json, got)
		}
	}
	out := &Frontmatter{}
	v := jsonValue(t, `{"big": 12345678901234567890, "neg": -9007199254740993, "pi": 3.14159265358979323846264338327950288, "e": 1e400, "l": [18446744073709551615, 2.50]}`).(map[string]any)
	for _, k := range []string{"big", "neg", "pi", "e", "l"} {
		if err := out.Set(k, v[k]); err != nil {
			t.Fatal(err)
		}
	}
	text, err := out.YAML()
	if err != nil {
		t.Fatal(err)
	}
	want := "big: 12345678901234567890\nneg: -9007199254740993\npi: 3.14159265358979323846264338327950288\ne: 1e400\nl:\n  - 18446744073709551615\n  - 2.50\n"
	if !bytes.Equal([]byte(text), []byte(want)) {
		t.Errorf("YAML:\n%s\nwant:\n%s", text, want)
	}
	back, err := ParseFrontmatter(text)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"big", "neg", "pi", "l"} {
		if !back.Same(k, v[k]) {
			t.Errorf("%s does not read back as the number written", k)
		}
	}
}
