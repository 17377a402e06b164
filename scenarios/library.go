package scenarios

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

//go:embed library/*.json
var embedded embed.FS

// maxNameLen bounds scenario names, which appear in URLs and headers.
const maxNameLen = 64

// Scenario is a named, described set of rules, loaded from a JSON file
// {"name","description","rules":[...]}.
type Scenario struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Rules       []Rule `json:"rules"`
	// Source names the file the scenario came from, for error messages.
	Source string `json:"-"`
}

// Library is the set of named scenarios: the ones that come from the
// binary and its flags (embedded, --scenarios-dir, --scenario FILE), the
// same on every replica and kept in the process, and the ones saved at run
// time, kept in its SavedStore (in Redis in shared mode, see UseSaved). A
// name is looked up in the first, then in the second. It is safe for
// concurrent use.
type Library struct {
	mu     sync.RWMutex
	byName map[string]Scenario // from the binary and its flags
	saved  SavedStore
}

// NewLibrary returns an empty Library whose saved scenarios are kept in
// memory.
func NewLibrary() *Library {
	return &Library{byName: make(map[string]Scenario), saved: NewMemorySaved()}
}

// UseSaved keeps the scenarios saved from now on in saved (RedisSaved in
// shared mode), and looks saved ones up there. Call it before serving.
func (l *Library) UseSaved(saved SavedStore) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.saved = saved
}

// SavedStore is where the scenarios saved at run time are kept: the store
// UseSaved gave, or the library's own in memory. It is exported so that a
// test can run the SavedStore suite on the store a backend wired in.
func (l *Library) SavedStore() SavedStore {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.saved
}

// LoadLibrary returns a Library holding the scenarios embedded in the binary.
func LoadLibrary() (*Library, error) {
	l := NewLibrary()
	files, err := fs.Glob(embedded, "library/*.json")
	if err != nil {
		return nil, fmt.Errorf("embedded scenarios: %w", err)
	}
	batch := make([]Scenario, 0, len(files))
	for _, name := range files {
		data, err := embedded.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("embedded scenario %s: %w", name, err)
		}
		sc, err := parseScenario("embedded "+path.Clean(name), data)
		if err != nil {
			return nil, err
		}
		batch = append(batch, sc)
	}
	if err := l.add(batch); err != nil {
		return nil, err
	}
	return l, nil
}

// AddDir adds a team's own scenario files: every *.json file directly in
// dir, in the same format as the embedded ones. It is all or nothing: on any
// error (a bad file, or a name already taken, which names both files)
// nothing is added.
func (l *Library) AddDir(dir string) error {
	files, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("scenarios directory: %w", err)
	}
	var batch []Scenario
	for _, f := range files {
		if f.IsDir() || !strings.EqualFold(filepath.Ext(f.Name()), ".json") {
			continue
		}
		name := filepath.Join(dir, f.Name())
		data, err := os.ReadFile(name)
		if err != nil {
			return fmt.Errorf("scenario file: %w", err)
		}
		sc, err := parseScenario(name, data)
		if err != nil {
			return err
		}
		batch = append(batch, sc)
	}
	if len(batch) == 0 {
		return fmt.Errorf("scenarios directory %s: no .json files", dir)
	}
	return l.add(batch)
}

// add stores batch unless a name clashes with a stored scenario or another
// one in the batch.
func (l *Library) add(batch []Scenario) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := make(map[string]string, len(batch))
	for _, sc := range batch {
		if old, ok := l.byName[sc.Name]; ok {
			return fmt.Errorf("scenario %q in %s clashes with the one in %s", sc.Name, sc.Source, old.Source)
		}
		if src, ok := seen[sc.Name]; ok {
			return fmt.Errorf("scenario %q in %s clashes with the one in %s", sc.Name, sc.Source, src)
		}
		seen[sc.Name] = sc.Source
	}
	for _, sc := range batch {
		l.byName[sc.Name] = sc
	}
	return nil
}

// Names lists the scenario names, sorted. An error wraps ErrUnavailable:
// the saved scenarios cannot be read.
func (l *Library) Names(ctx context.Context) ([]string, error) {
	all, err := l.Scenarios(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(all))
	for i, sc := range all {
		names[i] = sc.Name
	}
	return names, nil
}

// Get returns a copy of scenario name, or false when the library holds
// none of that name. An error wraps ErrUnavailable: whether a scenario of
// that name was saved cannot be told.
func (l *Library) Get(ctx context.Context, name string) (Scenario, bool, error) {
	l.mu.RLock()
	sc, ok := l.byName[name]
	l.mu.RUnlock()
	if ok {
		return cloneScenario(sc), true, nil
	}
	return l.SavedStore().Get(ctx, name)
}

// Scenarios returns copies of all scenarios, sorted by name. A saved one
// whose name a scenario of this process's own took since (a replica
// started with another --scenarios-dir) is hidden by it, as Get does.
func (l *Library) Scenarios(ctx context.Context) ([]Scenario, error) {
	saved, err := l.SavedStore().List(ctx)
	if err != nil {
		return nil, err
	}
	l.mu.RLock()
	out := make([]Scenario, 0, len(l.byName)+len(saved))
	for _, sc := range l.byName {
		out = append(out, cloneScenario(sc))
	}
	for _, sc := range saved {
		if _, ok := l.byName[sc.Name]; !ok {
			out = append(out, sc)
		}
	}
	l.mu.RUnlock()
	slices.SortFunc(out, func(a, b Scenario) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// parseScenario decodes and checks one scenario file. Errors name source and,
// for a rule, its index and field. Unknown fields are errors, so a misspelt
// "probabilty" cannot silently make a rule fire every time.
func parseScenario(source string, data []byte) (Scenario, error) {
	var sc Scenario
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return Scenario{}, fmt.Errorf("scenario file %s: %w", source, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Scenario{}, fmt.Errorf("scenario file %s: unexpected data after the scenario object", source)
	}
	sc.Source = source
	if err := validateScenario(sc); err != nil {
		return Scenario{}, fmt.Errorf("scenario file %s: %w", source, err)
	}
	return sc, nil
}

// validateScenario checks a scenario's name, description and rules; the
// error names the field, as "rules[1]: status: ...".
func validateScenario(sc Scenario) error {
	if err := validateName(sc.Name); err != nil {
		return err
	}
	if strings.TrimSpace(sc.Description) == "" {
		return fieldErr("description", "required")
	}
	if len(sc.Description) > MaxDescriptionBytes {
		return fieldErr("description", "%d bytes; at most %d", len(sc.Description), MaxDescriptionBytes)
	}
	if len(sc.Rules) == 0 {
		return fieldErr("rules", "at least one rule required")
	}
	if len(sc.Rules) > MaxScenarioRules {
		return fieldErr("rules", "%d rules; at most %d", len(sc.Rules), MaxScenarioRules)
	}
	for i, r := range sc.Rules {
		if r.ID != "" || r.Scenario != "" {
			return fieldErr(fmt.Sprintf("rules[%d]", i), "id and scenario are set on activation, leave them out")
		}
		if err := r.Validate(); err != nil {
			var fe *FieldError
			if errors.As(err, &fe) {
				return fieldErr(fmt.Sprintf("rules[%d].%s", i, fe.Field), "%s", fe.Message)
			}
			return fmt.Errorf("rules[%d]: %w", i, err)
		}
	}
	return nil
}

// Bounds on the scenarios saved at run time (POST /__sandbox/library).
const (
	// MaxSavedScenarios bounds how many may be saved into one library: in
	// shared mode, into the one SavedStore every replica uses.
	MaxSavedScenarios = 100
	// MaxScenarioRules bounds one scenario's rules.
	MaxScenarioRules = 32
)

// Save adds sc, made at run time (POST /__sandbox/library: sent as JSON
// or built from the journal), after the checks a scenario file gets: a
// *FieldError names what is wrong. A taken name gives ErrScenarioExists;
// more than MaxSavedScenarios saved, ErrLibraryFull; a failure of the
// SavedStore, an error wrapping ErrUnavailable. It returns the scenario as
// saved.
func (l *Library) Save(ctx context.Context, sc Scenario) (Scenario, error) {
	sc = cloneScenario(sc)
	sc.Source = savedSource
	if err := validateScenario(sc); err != nil {
		return Scenario{}, err
	}
	l.mu.RLock()
	_, taken := l.byName[sc.Name]
	l.mu.RUnlock()
	if taken {
		return Scenario{}, fmt.Errorf("%w: %s", ErrScenarioExists, sc.Name)
	}
	if err := l.SavedStore().Save(ctx, sc); err != nil {
		return Scenario{}, err
	}
	return sc, nil
}

// Saved reports whether sc was saved at run time (POST /__sandbox/library)
// rather than coming with the binary or its flags.
func (sc Scenario) Saved() bool { return sc.Source == savedSource }

// ErrNotSaved is returned (wrapped) by Delete for a scenario that comes
// with the binary or its flags: only scenarios saved at run time can go.
var ErrNotSaved = errors.New("only scenarios saved through the admin API can be deleted")

// Delete removes the scenario saved as name. A scenario of this process's
// own library gives ErrNotSaved; no scenario of that name, an error
// wrapping ErrNotFound; a failure of the SavedStore, one wrapping
// ErrUnavailable.
func (l *Library) Delete(ctx context.Context, name string) error {
	l.mu.RLock()
	_, own := l.byName[name]
	l.mu.RUnlock()
	if own {
		return fmt.Errorf("scenario %q: %w", name, ErrNotSaved)
	}
	return l.SavedStore().Delete(ctx, name)
}

// validateName checks a scenario name: lower-case words joined by hyphens,
// safe in a URL path and a header.
func validateName(name string) error {
	if name == "" {
		return fieldErr("name", "required")
	}
	if len(name) > maxNameLen {
		return fieldErr("name", "%q is longer than %d characters", name, maxNameLen)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fieldErr("name", "%q may only contain a-z, 0-9 and '-'", name)
		}
	}
	return nil
}

// cloneScenario copies sc deeply enough that callers cannot change the
// library through it.
func cloneScenario(sc Scenario) Scenario {
	rules := make([]Rule, len(sc.Rules))
	for i, r := range sc.Rules {
		rules[i] = cloneRule(r)
	}
	sc.Rules = rules
	return sc
}

// AddFile adds one scenario file (the --scenario FILE form) and returns it.
func (l *Library) AddFile(path string) (Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Scenario{}, fmt.Errorf("scenario file: %w", err)
	}
	sc, err := parseScenario(path, data)
	if err != nil {
		return Scenario{}, err
	}
	if err := l.add([]Scenario{sc}); err != nil {
		return Scenario{}, err
	}
	return sc, nil
}
