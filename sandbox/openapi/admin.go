package openapi

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

// AdminPath is where the admin API's document is served.
const AdminPath = "/__sandbox/openapi.json"

// adminSource is the embedded admin.json: the admin API's document, whose
// references to components it shares with openapi.json are written as
// external references (openapi.json#/components/...), so each component is
// written once and linters resolve them on disk.
//
//go:embed admin.json
var adminSource []byte

// externalRef is how admin.json refers to openapi.json's components.
const externalRef = "openapi.json#/components/"

// AdminDocument returns the OpenAPI document of the admin API
// (/__sandbox/*), self-contained: every component it uses from openapi.json
// is copied into its own components and the references are made local, so
// a client fetching it from AdminPath needs nothing else. Each call builds
// a fresh copy. An error means the embedded documents do not fit together,
// which the package's tests rule out.
func AdminDocument() ([]byte, error) {
	return bundle(adminSource, document)
}

// bundle makes adminSource self-contained with components of mainSource.
func bundle(adminSource, mainSource []byte) ([]byte, error) {
	var admin, main map[string]any
	if err := json.Unmarshal(adminSource, &admin); err != nil {
		return nil, fmt.Errorf("admin.json: %w", err)
	}
	if err := json.Unmarshal(mainSource, &main); err != nil {
		return nil, fmt.Errorf("openapi.json: %w", err)
	}
	b := &bundler{from: main, into: components(admin)}
	b.walk(admin, true)
	for len(b.queue) > 0 {
		kind, name := b.queue[0][0], b.queue[0][1]
		b.queue = b.queue[1:]
		if err := b.copy(kind, name); err != nil {
			return nil, err
		}
	}
	out, err := json.MarshalIndent(admin, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode the admin document: %w", err)
	}
	return append(out, '\n'), nil
}

// bundler copies components from openapi.json into the admin document.
type bundler struct {
	from   map[string]any // openapi.json
	into   map[string]any // the admin document's components
	queue  [][2]string    // kind, name: components to copy
	queued map[string]bool
}

// walk visits every "$ref" under v. In the admin document (external true)
// references to openapi.json are made local and their targets queued; in a
// component copied from openapi.json every local reference is queued, since
// its target lives in openapi.json too.
func (b *bundler) walk(v any, external bool) {
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok {
			switch {
			case external && strings.HasPrefix(ref, externalRef):
				v["$ref"] = "#/components/" + strings.TrimPrefix(ref, externalRef)
				b.enqueue(strings.TrimPrefix(ref, externalRef))
			case !external && strings.HasPrefix(ref, "#/components/"):
				b.enqueue(strings.TrimPrefix(ref, "#/components/"))
			}
		}
		for _, child := range v {
			b.walk(child, external)
		}
	case []any:
		for _, child := range v {
			b.walk(child, external)
		}
	}
}

func (b *bundler) enqueue(ref string) {
	if b.queued == nil {
		b.queued = map[string]bool{}
	}
	if b.queued[ref] {
		return
	}
	b.queued[ref] = true
	kind, name, _ := strings.Cut(ref, "/")
	b.queue = append(b.queue, [2]string{kind, name})
}

// copy copies components.kind.name of openapi.json into the admin
// document. A name the admin document already uses for its own component
// is an error: the copy would replace it.
func (b *bundler) copy(kind, name string) error {
	src, _ := components(b.from)[kind].(map[string]any)
	value, ok := src[name]
	if !ok {
		return fmt.Errorf("admin.json refers to %s%s/%s, which openapi.json does not have", externalRef, kind, name)
	}
	dst, _ := b.into[kind].(map[string]any)
	if dst == nil {
		dst = map[string]any{}
		b.into[kind] = dst
	}
	if _, taken := dst[name]; taken {
		return fmt.Errorf("admin.json has its own components.%s.%s; it cannot also use openapi.json's", kind, name)
	}
	dst[name] = value
	b.walk(value, false)
	return nil
}

// components returns doc's components object, adding an empty one if
// there is none.
func components(doc map[string]any) map[string]any {
	c, ok := doc["components"].(map[string]any)
	if !ok {
		c = map[string]any{}
		doc["components"] = c
	}
	return c
}
