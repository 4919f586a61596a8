package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

func TestComplexity(t *testing.T) {
	cases := []struct {
		name, body string
		want       int
	}{
		{"straight", `x := 1; _ = x`, 1},
		{"if and loops", `if a { for {} }; for range s {}`, 4},
		{"conditions", `if a && b || c {}`, 4},
		{"switch without default", `switch a { case 1, 2: case 3: default: }`, 3},
		{"select", `select { case <-ch: default: }`, 2},
		{"func literal counts", `f := func() { if a {} }; f()`, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "package p\nfunc f(a, b, c bool, s []int, ch chan int) {\n" + c.body + "\n}\n"
			f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := complexity(f.Decls[0].(*ast.FuncDecl)); got != c.want {
				t.Errorf("complexity = %d, want %d", got, c.want)
			}
		})
	}
}
