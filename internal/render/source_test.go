package render

import "testing"

func TestSource_TerminalSafe(t *testing.T) {
	in := "a\tb\r\nred \x1b[31mtext\x1b[0m \x07bell \u009bcsi café ☕\n"
	want := "a\tb\r\nred \uFFFD[31mtext\uFFFD[0m \uFFFDbell \uFFFDcsi café ☕\n"
	if got := terminalSafe(in); got != want {
		t.Errorf("terminalSafe = %q, want %q", got, want)
	}
}
