package sandboxtest_test

import (
	"go/types"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// TestSurfaceNamesNoOtherPackageOfTheModule: sandboxtest is the API users'
// tests import and keep, so no exported name of it may mention a type of
// another package of this module (those are free to change between
// releases). It type-checks the package and walks every exported
// signature, field and method, as go doc -all shows them.
func TestSurfaceNamesNoOtherPackageOfTheModule(t *testing.T) {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedModule}, ".")
	if err != nil {
		t.Fatalf("load sandboxtest: %v", err)
	}
	if len(pkgs) != 1 || len(pkgs[0].Errors) > 0 || pkgs[0].Module == nil {
		t.Fatalf("load sandboxtest: %d packages, errors %v", len(pkgs), pkgs[0].Errors)
	}
	pkg := pkgs[0]
	leaks := surfaceLeaks(pkg.Types, pkg.Module.Path)
	if len(leaks) > 0 {
		t.Errorf("sandboxtest's exported API names types of other packages of %s:\n\t%s",
			pkg.Module.Path, strings.Join(leaks, "\n\t"))
	}
}

// TestOtherPackagesSayTheyAreNotStable: only sandboxtest (and the command)
// is a surface users may keep; every other importable package of the
// module says in its package doc that it is not, so nobody builds on it
// unwarned.
func TestOtherPackagesSayTheyAreNotStable(t *testing.T) {
	self, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedModule}, ".")
	if err != nil || len(self) != 1 || self[0].Module == nil {
		t.Fatalf("load sandboxtest: %v", err)
	}
	module := self[0].Module.Path
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax}, module+"/...")
	if err != nil {
		t.Fatalf("load %s/...: %v", module, err)
	}
	checked := 0
	for _, pkg := range pkgs {
		if pkg.Name == "main" || pkg.PkgPath == self[0].PkgPath || strings.Contains(pkg.PkgPath+"/", "/internal/") {
			continue
		}
		checked++
		var doc strings.Builder
		for _, f := range pkg.Syntax {
			if f.Doc != nil {
				doc.WriteString(f.Doc.Text())
			}
		}
		if !strings.Contains(strings.Join(strings.Fields(doc.String()), " "), "is not a stable API") {
			t.Errorf("package %s: its package doc does not say it is not a stable API", pkg.PkgPath)
		}
	}
	if checked == 0 {
		t.Fatalf("no package of %s checked", module)
	}
}

// surfaceLeaks lists "where: type" for each exported name of pkg whose
// declaration mentions a named type of module other than pkg's own.
func surfaceLeaks(pkg *types.Package, module string) []string {
	var leaks []string
	foreign := func(where string, typ types.Type) {
		walkType(typ, map[types.Type]bool{}, func(n *types.Named) {
			p := n.Obj().Pkg()
			if p != nil && p != pkg && (p.Path() == module || strings.HasPrefix(p.Path(), module+"/")) {
				leaks = append(leaks, where+": "+types.TypeString(n, nil))
			}
		})
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		foreign(name, obj.Type().Underlying())
		if _, isType := obj.(*types.TypeName); !isType {
			continue
		}
		for m := range types.NewMethodSet(types.NewPointer(obj.Type())).Methods() {
			if m.Obj().Exported() {
				foreign(name+"."+m.Obj().Name(), m.Type())
			}
		}
	}
	slices.Sort(leaks)
	return slices.Compact(leaks)
}

// walkType calls named for every named type typ mentions, looking through
// pointers, containers, signatures, exported struct fields and interface
// methods, but not into other named types (their own declarations are
// walked where they are declared).
func walkType(typ types.Type, seen map[types.Type]bool, named func(*types.Named)) {
	if seen[typ] {
		return
	}
	seen[typ] = true
	switch t := typ.(type) {
	case *types.Named:
		named(t)
		for arg := range t.TypeArgs().Types() {
			walkType(arg, seen, named)
		}
	case *types.Alias:
		walkType(types.Unalias(t), seen, named)
	case *types.Pointer:
		walkType(t.Elem(), seen, named)
	case *types.Slice:
		walkType(t.Elem(), seen, named)
	case *types.Array:
		walkType(t.Elem(), seen, named)
	case *types.Chan:
		walkType(t.Elem(), seen, named)
	case *types.Map:
		walkType(t.Key(), seen, named)
		walkType(t.Elem(), seen, named)
	case *types.Signature:
		for v := range t.Params().Variables() {
			walkType(v.Type(), seen, named)
		}
		for v := range t.Results().Variables() {
			walkType(v.Type(), seen, named)
		}
	case *types.Struct:
		for f := range t.Fields() {
			if f.Exported() {
				walkType(f.Type(), seen, named)
			}
		}
	case *types.Interface:
		for m := range t.Methods() {
			if m.Exported() {
				walkType(m.Type(), seen, named)
			}
		}
	}
}
