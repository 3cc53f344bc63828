package docscheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestErrorCodesAreDeclaredOnce: every errorCode constant of the host is
// in fault/codes.go, and no call of fault's constructors spells a code as a
// literal, so a code has one declaration and one name. (The simulator's and
// the device protocol's codes are the device's, in protocol.)
func TestErrorCodesAreDeclaredOnce(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for code, where := range declaredCodes(t, root) {
		if !strings.HasPrefix(where, "fault/codes.go: ") {
			t.Errorf("%s is declared in %s; declare it in fault/codes.go", code, where)
		}
	}
	ctors := map[string]int{"New": 1, "Newf": 1, "Wrap": 1, "Usage": 0, "Usagef": 0}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || rel == "sim" || rel == "protocol" || rel == "internal") {
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
		inFault := f.Name.Name == "fault"
		// A second name for a code (CodeX = fault.CodeY) is a second
		// place to look it up: callers use fault's constant.
		for _, decl := range f.Decls {
			if g, ok := decl.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i < len(vs.Values) && isCodeName(name.Name) {
							if _, ok := vs.Values[i].(*ast.SelectorExpr); ok {
								t.Errorf("%s: %s is another name for a code; use fault's (or protocol's) constant", fset.Position(name.Pos()), name.Name)
							}
						}
					}
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			name := ""
			switch fn := call.Fun.(type) {
			case *ast.SelectorExpr:
				if id, ok := fn.X.(*ast.Ident); ok && id.Name == "fault" {
					name = fn.Sel.Name
				}
			case *ast.Ident:
				if inFault {
					name = fn.Name
				}
			}
			i, ok := ctors[name]
			if !ok || len(call.Args) <= i {
				return true
			}
			if lit, ok := call.Args[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				v, _ := strconv.Unquote(lit.Value)
				t.Errorf("%s: fault.%s spells the code %q; use its constant in fault/codes.go", fset.Position(lit.Pos()), name, v)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
