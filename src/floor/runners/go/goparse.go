// Command goparse prints the test functions and imports of Go test files, for shipmoor's
// attribution of build failures at base (book: floor/attribution.md). It is embedded in shipmoor, built with the
// user's go, and run as `goparse FILE...`; it prints one JSON object per file, one a line:
//
//	{"file":F,"items":[{"name","start","end","uses"}],"imports":[{"start","end","names"}]}
//
// or {"file":F,"error":E} when F cannot be read or does not parse. Lines are 1-based and
// inclusive. Only the standard library is used, so it builds without any module download.
package main

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

type item struct {
	Name  string   `json:"name"`
	Start int      `json:"start"`
	End   int      `json:"end"`
	Uses  []string `json:"uses"`
}

type imp struct {
	Start int      `json:"start"`
	End   int      `json:"end"`
	Names []string `json:"names"`
}

type result struct {
	File    string `json:"file"`
	Error   string `json:"error,omitempty"`
	Items   []item `json:"items"`
	Imports []imp  `json:"imports"`
}

// isTest is go's rule for a test function's name: Test, then nothing or a rune that is not a
// lower-case letter.
func isTest(name string) bool {
	if !strings.HasPrefix(name, "Test") {
		return false
	}
	rest := name[len("Test"):]
	if rest == "" {
		return true
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return !unicode.IsLower(r)
}

// assumedName is the name an import binds when it has no alias and its package cannot be
// loaded (at base it often does not exist): the last path element, without a major version
// element, a `go-` prefix, or anything from the first character that is not an identifier's
// (golang.org/x/tools' ImportPathToAssumedName).
func assumedName(importPath string) string {
	base := path.Base(importPath)
	if strings.HasPrefix(base, "v") {
		if _, err := strconv.Atoi(base[1:]); err == nil {
			if dir := path.Dir(importPath); dir != "." {
				base = path.Base(dir)
			}
		}
	}
	base = strings.TrimPrefix(base, "go-")
	if i := strings.IndexFunc(base, func(r rune) bool {
		return !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r))
	}); i >= 0 {
		base = base[:i]
	}
	return base
}

func parse(file string) result {
	res := result{File: file, Items: []item{}, Imports: []imp{}}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	line := func(p token.Pos) int { return fset.Position(p).Line }
	for _, s := range f.Imports {
		names := []string{}
		if s.Name != nil {
			// `_` binds nothing; `.` binds names that cannot be known without the package.
			if s.Name.Name != "_" && s.Name.Name != "." {
				names = append(names, s.Name.Name)
			}
		} else if p, err := strconv.Unquote(s.Path.Value); err == nil {
			if n := assumedName(p); n != "" {
				names = append(names, n)
			}
		}
		res.Imports = append(res.Imports, imp{Start: line(s.Pos()), End: line(s.End()), Names: names})
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || !isTest(fn.Name.Name) {
			continue
		}
		// Every identifier the function mentions; a selector `pkg.Name` contributes both.
		seen := map[string]bool{}
		ast.Inspect(fn, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				seen[id.Name] = true
			}
			return true
		})
		uses := make([]string, 0, len(seen))
		for u := range seen {
			uses = append(uses, u)
		}
		sort.Strings(uses)
		res.Items = append(res.Items, item{
			Name:  fn.Name.Name,
			Start: line(fn.Pos()),
			End:   line(fn.End()),
			Uses:  uses,
		})
	}
	return res
}

func main() {
	enc := json.NewEncoder(os.Stdout)
	for _, file := range os.Args[1:] {
		if err := enc.Encode(parse(file)); err != nil {
			os.Exit(2)
		}
	}
}
