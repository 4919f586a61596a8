package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/internal/hostile"
)

// sigterm runs every verb against every shape whole, then sends it
// SIGTERM at each moment of that run, and prints per shape and verb the
// whole run's wall time, the longest any run went on after the signal,
// and the exit codes. A run that goes on longer than bound, ends with a
// code other than 0, 5 or 143 (the signal before synapse's handler is in
// place) or leaves something half done counts as bad.
func sigterm(r hostile.Runner, work string, size int, want map[string]bool, moments []float64, bound time.Duration) int {
	bad := 0
	fmt.Printf("SIGTERM at %v of each verb's whole run; bound %s after the signal\n\n", moments, bound)
	fmt.Println("| shape | verb | whole run | signal at | ran on after it (worst) | exit codes |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, s := range hostile.Shapes(size) {
		if len(want) > 0 && !want[s.Name] {
			continue
		}
		fmt.Fprintf(os.Stderr, "== %s (%s)\n", s.Name, s.What)
		stops, err := r.TerminateShape(work, s, moments)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", s.Name, err)
			bad++
			continue
		}
		for _, st := range stops {
			var at, fails []string
			for _, t := range st.Trials {
				at = append(at, hostile.Secs(t.At))
				ok := t.After <= bound && (t.Code == 0 || t.Code == 5 || t.Code == 143) && t.Harm == ""
				if !ok {
					fails = append(fails, fmt.Sprintf("at %s: ran on %s, exit %d %s %s", hostile.Secs(t.At), hostile.Secs(t.After), t.Code, t.Line, t.Harm))
				}
			}
			cell := hostile.Secs(st.Worst())
			if len(fails) > 0 {
				bad++
				cell = "**" + cell + "**"
				for _, f := range fails {
					fmt.Fprintf(os.Stderr, "  FAIL %s %s\n", st.Verb, f)
				}
			}
			fmt.Printf("| %s | %s | %s (exit %d) | %s | %s | %s |\n", s.Name, st.Verb, hostile.Secs(st.Whole.Took), st.Whole.Code,
				strings.Join(at, ", "), cell, st.Codes())
		}
	}
	return bad
}

// parseFractions parses "0.2,0.5": each strictly between 0 and 1.
func parseFractions(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || x <= 0 || x >= 1 {
			return nil, fmt.Errorf("-moments: %q is not a fraction between 0 and 1", f)
		}
		out = append(out, x)
	}
	return out, nil
}
