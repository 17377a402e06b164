package collections

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// File names of the generated collections inside the output directory.
const (
	PostmanFile = "referrals-sandbox.postman_collection.json"
	BrunoDir    = "referrals-sandbox-bruno"
)

// name and description head both collections.
const (
	name        = "referrals-sandbox"
	description = "Every operation of the referrals sandbox's OpenAPI document with an example, and a folder of failure drills. " +
		"Set the collection variables auth_url, base_url, root_url, client_id, client_secret and scope for your sandbox; " +
		"the client-credentials token is fetched and renewed before it expires."
)

// Generated is the two collections built from one OpenAPI document.
type Generated struct {
	// Postman is the Postman v2.1 collection.
	Postman []byte
	// Bruno is the Bruno collection: file path (slash separated, inside
	// its directory) to content.
	Bruno map[string][]byte
}

// Generate builds both collections from openAPI, the API's OpenAPI 3.0
// document, with vars as the collection variables' values.
func Generate(openAPI []byte, vars Vars) (*Generated, error) {
	var doc document
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		return nil, fmt.Errorf("read the OpenAPI document: %w", err)
	}
	reqs, err := plan(&doc)
	if err != nil {
		return nil, fmt.Errorf("read the OpenAPI document: %w", err)
	}
	g := &Generated{}
	if g.Postman, err = postman(name, description, vars, reqs); err != nil {
		return nil, fmt.Errorf("postman collection: %w", err)
	}
	if g.Bruno, err = bruno(name, description, vars, reqs); err != nil {
		return nil, fmt.Errorf("bruno collection: %w", err)
	}
	return g, nil
}

// Write puts the collections into dir (created if needed): PostmanFile and
// the BrunoDir directory, replacing earlier ones. It returns the paths it
// wrote.
func (g *Generated) Write(dir string) ([]string, error) {
	brunoDir := filepath.Join(dir, BrunoDir)
	// A request renamed since the last run must not leave its old file.
	if err := os.RemoveAll(brunoDir); err != nil {
		return nil, err
	}
	written := []string{filepath.Join(dir, PostmanFile)}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(written[0], append(g.Postman, '\n'), 0o644); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(g.Bruno))
	for n := range g.Bruno {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(brunoDir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, g.Bruno[n], 0o644); err != nil {
			return nil, err
		}
	}
	return append(written, brunoDir), nil
}
