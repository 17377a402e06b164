package scenarios

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// MemorySaved is the SavedStore of a sandbox that runs alone: a map in
// the process, lost when it stops. It is safe for concurrent use.
type MemorySaved struct {
	mu     sync.RWMutex
	byName map[string]Scenario
}

var _ SavedStore = (*MemorySaved)(nil)

// NewMemorySaved returns an empty MemorySaved.
func NewMemorySaved() *MemorySaved {
	return &MemorySaved{byName: make(map[string]Scenario)}
}

// Save implements SavedStore.Save.
func (m *MemorySaved) Save(_ context.Context, sc Scenario) error {
	sc = cloneScenario(sc)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byName[sc.Name]; ok {
		return fmt.Errorf("%w: %s", ErrScenarioExists, sc.Name)
	}
	if len(m.byName) >= MaxSavedScenarios {
		return fmt.Errorf("%w: at most %d", ErrLibraryFull, MaxSavedScenarios)
	}
	m.byName[sc.Name] = sc
	return nil
}

// Get implements SavedStore.Get.
func (m *MemorySaved) Get(_ context.Context, name string) (Scenario, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	sc, ok := m.byName[name]
	if !ok {
		return Scenario{}, false, nil
	}
	return cloneScenario(sc), true, nil
}

// List implements SavedStore.List.
func (m *MemorySaved) List(context.Context) ([]Scenario, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]Scenario, 0, len(m.byName))
	for _, sc := range m.byName {
		out = append(out, cloneScenario(sc))
	}
	slices.SortFunc(out, func(a, b Scenario) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Delete implements SavedStore.Delete.
func (m *MemorySaved) Delete(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byName[name]; !ok {
		return fmt.Errorf("saved scenario %q: %w", name, ErrNotFound)
	}
	delete(m.byName, name)
	return nil
}
