package docscheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// pages are where host error codes are documented.
var pages = []string{"docs/error-codes.md", "docs/verification.md", "docs/managed.md"}

// TestEveryErrorCodeIsDocumented finds every `Code… = "snake_case"`
// constant in the host's production code and requires its value, in
// backquotes, on one of the pages. The simulator's codes are the device's
// and have their own table.
func TestEveryErrorCodeIsDocumented(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var doc strings.Builder
	for _, p := range pages {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		doc.Write(b)
	}
	codes := declaredCodes(t, root)
	if len(codes) < 100 {
		t.Fatalf("found only %d error codes; is the walk broken?", len(codes))
	}
	for code, where := range codes {
		if !strings.Contains(doc.String(), "`"+code+"`") {
			t.Errorf("%s (%s) is on none of %v", code, where, pages)
		}
	}
}

// declaredCodes maps each code value to the constant that declares it.
func declaredCodes(t *testing.T, root string) map[string]string {
	t.Helper()
	codes := map[string]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || rel == "sim") {
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
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !isCodeName(name.Name) || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					if v, err := strconv.Unquote(lit.Value); err == nil && v != "" {
						if prev, ok := codes[v]; ok {
							t.Errorf("%s is declared twice: %s and %s", v, prev, rel+": "+name.Name)
						}
						codes[v] = rel + ": " + name.Name
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return codes
}

// isCodeName reports a constant named for an error code: Code… or code….
func isCodeName(n string) bool {
	return strings.HasPrefix(n, "Code") || strings.HasPrefix(n, "code") && len(n) > 4 && n[4] >= 'A' && n[4] <= 'Z'
}
