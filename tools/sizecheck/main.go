// Command sizecheck fails when product code grows past the project's size
// limits: a function over -func lines (120) or over -cyclo cyclomatic
// complexity (40), or a file over -file lines (900). Tests (*_test.go),
// tools/, testdata/ and third_party/ (copies of other projects' code) are
// not product code. Complexity is counted as
// gocyclo counts it: 1, plus one for each if, for, range, case, select
// case, && and || (function literals count toward the function they are
// in). scripts/test runs it.
//
//	go run ./tools/sizecheck [-func 120] [-cyclo 40] [-file 900] [-list] [DIR]
//
// -list prints every function over -warn lines (80), longest first, as a
// worklist, without failing on them.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type finding struct {
	where string
	lines int
	cyclo int // functions only
}

func main() {
	maxFunc := flag.Int("func", 120, "most lines a function may have")
	maxCyclo := flag.Int("cyclo", 40, "most cyclomatic complexity a function may have")
	maxFile := flag.Int("file", 900, "most lines a file may have")
	warn := flag.Int("warn", 80, "with -list: list functions over this many lines")
	list := flag.Bool("list", false, "list the functions over -warn lines, longest first")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	funcs, files, err := measure(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sizecheck:", err)
		os.Exit(1)
	}
	if *list {
		for _, f := range funcs {
			if f.lines > *warn {
				fmt.Printf("%5d  %s\n", f.lines, f.where)
			}
		}
		return
	}
	bad := 0
	for _, f := range funcs {
		if f.lines > *maxFunc {
			fmt.Printf("%s: %d lines (limit %d): split it along its steps\n", f.where, f.lines, *maxFunc)
			bad++
		}
		if f.cyclo > *maxCyclo {
			fmt.Printf("%s: cyclomatic complexity %d (limit %d): split it along its steps\n", f.where, f.cyclo, *maxCyclo)
			bad++
		}
	}
	for _, f := range files {
		if f.lines > *maxFile {
			fmt.Printf("%s: %d lines (limit %d): split the file along its seams\n", f.where, f.lines, *maxFile)
			bad++
		}
	}
	if bad > 0 {
		os.Exit(1)
	}
}

// measure returns every product function and file under root with its
// length in lines, longest first.
func measure(root string) (funcs, files []finding, err error) {
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "tools", "testdata", "third_party", "node_modules", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files = append(files, finding{path, fset.File(f.Pos()).LineCount(), 0})
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
			funcs = append(funcs, finding{fmt.Sprintf("%s:%d %s", path, start.Line, funcName(fn)), end.Line - start.Line + 1, complexity(fn)})
		}
		return nil
	})
	byLines := func(s []finding) {
		sort.SliceStable(s, func(i, j int) bool { return s[i].lines > s[j].lines })
	}
	byLines(funcs)
	byLines(files)
	return funcs, files, err
}

// funcName is a function's name with its receiver's type: (*Indexer).Scan.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	if g, ok := t.(*ast.IndexListExpr); ok {
		t = g.X
	}
	name := "?"
	if id, ok := t.(*ast.Ident); ok {
		name = id.Name
	}
	return fmt.Sprintf("(%s%s).%s", star, name, fn.Name.Name)
}

// complexity is a function's cyclomatic complexity as gocyclo counts it.
func complexity(fn *ast.FuncDecl) int {
	c := 1
	ast.Inspect(fn, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if n.List != nil { // not default
				c++
			}
		case *ast.CommClause:
			if n.Comm != nil { // not default
				c++
			}
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}
