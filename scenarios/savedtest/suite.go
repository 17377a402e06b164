// Package savedtest is the conformance suite of scenarios.SavedStore:
// every store runs it, so that a scenario saved through one is given back
// exactly, a taken name and a full store are refused alike, and the
// bounds hold under concurrent saves. It is not a stable API.
package savedtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// Run runs the suite; open returns an empty store for one subtest.
func Run(t *testing.T, open func(t *testing.T) scenarios.SavedStore) {
	t.Run("SaveGetList", func(t *testing.T) { testSaveGetList(t, open(t)) })
	t.Run("TakenName", func(t *testing.T) { testTakenName(t, open(t)) })
	t.Run("Full", func(t *testing.T) { testFull(t, open(t)) })
	t.Run("ConcurrentSaves", func(t *testing.T) { testConcurrentSaves(t, open(t)) })
	t.Run("ConcurrentSameName", func(t *testing.T) { testConcurrentSameName(t, open(t)) })
	t.Run("Copies", func(t *testing.T) { testCopies(t, open(t)) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, open(t)) })
}

// scenario is a valid scenario named name: a timeline and a delayed
// status, so every kind of field goes through the store.
func scenario(name string) scenarios.Scenario {
	return scenarios.Scenario{Name: name, Description: "Saved as " + name + ".", Rules: []scenarios.Rule{
		{Endpoint: scenarios.EndpointAPI, ClientID: "sandbox-partner", Timeline: []scenarios.Phase{
			{For: scenarios.Duration(5 * time.Minute), Status: 503, RetryAfterSeconds: 30},
			{For: scenarios.Duration(time.Minute), Delay: &scenarios.Delay{Median: scenarios.Duration(800 * time.Millisecond), Sigma: 0.4}},
		}},
		{Endpoint: scenarios.EndpointToken, Status: 400, Error: "invalid_client", Delay: &scenarios.Delay{Fixed: scenarios.Duration(time.Second)}, Probability: 0.5, Seed: 7},
	}}
}

// encoded is sc as the admin API shows it, to compare scenarios whole.
func encoded(t *testing.T, sc scenarios.Scenario) string {
	t.Helper()
	raw, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func mustSave(t *testing.T, st scenarios.SavedStore, sc scenarios.Scenario) {
	t.Helper()
	if err := st.Save(context.Background(), sc); err != nil {
		t.Fatalf("Save(%q): %v", sc.Name, err)
	}
}

func mustGet(t *testing.T, st scenarios.SavedStore, name string) (scenarios.Scenario, bool) {
	t.Helper()
	sc, ok, err := st.Get(context.Background(), name)
	if err != nil {
		t.Fatalf("Get(%q): %v", name, err)
	}
	return sc, ok
}

func names(t *testing.T, st scenarios.SavedStore) []string {
	t.Helper()
	all, err := st.List(context.Background())
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if all == nil {
		t.Fatal("List answered nil, want an empty list")
	}
	out := make([]string, len(all))
	for i, sc := range all {
		out[i] = sc.Name
	}
	return out
}

// testSaveGetList: what is saved comes back exactly, by name and in the
// list, which is sorted; an unknown name is not found, without an error.
func testSaveGetList(t *testing.T, st scenarios.SavedStore) {
	if got := names(t, st); len(got) != 0 {
		t.Fatalf("an empty store lists %v", got)
	}
	if _, ok := mustGet(t, st, "nothing-here"); ok {
		t.Fatal("an empty store found a scenario")
	}
	for _, name := range []string{"team-b", "team-a", "team-c"} {
		mustSave(t, st, scenario(name))
	}
	if got := names(t, st); !slices.Equal(got, []string{"team-a", "team-b", "team-c"}) {
		t.Errorf("List names %v, want them sorted", got)
	}
	all, _ := st.List(context.Background())
	for _, sc := range all {
		if encoded(t, sc) != encoded(t, scenario(sc.Name)) {
			t.Errorf("listed %s, want %s", encoded(t, sc), encoded(t, scenario(sc.Name)))
		}
	}
	got, ok := mustGet(t, st, "team-b")
	if !ok || encoded(t, got) != encoded(t, scenario("team-b")) {
		t.Errorf("Get(team-b) = %s, %v; want %s", encoded(t, got), ok, encoded(t, scenario("team-b")))
	}
	if _, ok := mustGet(t, st, "team-d"); ok {
		t.Error("found a scenario never saved")
	}
}

// testTakenName: a second save under a name is refused and leaves the
// first as it was.
func testTakenName(t *testing.T, st scenarios.SavedStore) {
	mustSave(t, st, scenario("taken"))
	other := scenario("taken")
	other.Description = "Another one."
	if err := st.Save(context.Background(), other); !errors.Is(err, scenarios.ErrScenarioExists) {
		t.Fatalf("saving a taken name: %v, want ErrScenarioExists", err)
	}
	if got, _ := mustGet(t, st, "taken"); got.Description != scenario("taken").Description {
		t.Errorf("the refused save changed the scenario: %q", got.Description)
	}
}

// testFull: MaxSavedScenarios fit, the next is refused; a taken name is
// refused as taken, full or not.
func testFull(t *testing.T, st scenarios.SavedStore) {
	for i := range scenarios.MaxSavedScenarios {
		mustSave(t, st, scenario(fmt.Sprintf("s-%03d", i)))
	}
	if err := st.Save(context.Background(), scenario("one-more")); !errors.Is(err, scenarios.ErrLibraryFull) {
		t.Fatalf("save %d: %v, want ErrLibraryFull", scenarios.MaxSavedScenarios+1, err)
	}
	if err := st.Save(context.Background(), scenario("s-000")); !errors.Is(err, scenarios.ErrScenarioExists) {
		t.Errorf("a taken name in a full store: %v, want ErrScenarioExists", err)
	}
	if got := names(t, st); len(got) != scenarios.MaxSavedScenarios || slices.Contains(got, "one-more") {
		t.Errorf("%d listed, want exactly %d", len(got), scenarios.MaxSavedScenarios)
	}
}

// testDelete: a deleted scenario is gone from Get and List, its name and
// its room can be taken again, the others stay, and deleting a name not
// saved is ErrNotFound.
func testDelete(t *testing.T, st scenarios.SavedStore) {
	ctx := context.Background()
	for i := range scenarios.MaxSavedScenarios {
		mustSave(t, st, scenario(fmt.Sprintf("s-%03d", i)))
	}
	if err := st.Delete(ctx, "s-001"); err != nil {
		t.Fatalf("Delete(s-001): %v", err)
	}
	if _, ok := mustGet(t, st, "s-001"); ok {
		t.Error("Get finds a deleted scenario")
	}
	if got := names(t, st); len(got) != scenarios.MaxSavedScenarios-1 || slices.Contains(got, "s-001") || !slices.Contains(got, "s-002") {
		t.Errorf("after the delete List has %d names (s-001 listed: %v), want the others only", len(got), slices.Contains(got, "s-001"))
	}
	if err := st.Delete(ctx, "s-001"); !errors.Is(err, scenarios.ErrNotFound) {
		t.Errorf("deleting it again: %v, want ErrNotFound", err)
	}
	if err := st.Delete(ctx, "never-saved"); !errors.Is(err, scenarios.ErrNotFound) {
		t.Errorf("deleting a name never saved: %v, want ErrNotFound", err)
	}
	replacement := scenario("s-001")
	replacement.Description = "Saved again."
	mustSave(t, st, replacement)
	if got, ok := mustGet(t, st, "s-001"); !ok || got.Description != "Saved again." {
		t.Errorf("the name saved again reads %+v, %v", got, ok)
	}
}

// saveAll saves each of scs at once and returns the errors.
func saveAll(st scenarios.SavedStore, scs []scenarios.Scenario) []error {
	errs := make([]error, len(scs))
	var wg sync.WaitGroup
	for i, sc := range scs {
		wg.Go(func() { errs[i] = st.Save(context.Background(), sc) })
	}
	wg.Wait()
	return errs
}

// testConcurrentSaves: more saves than room, all at once: exactly
// MaxSavedScenarios are taken, the others refused as full.
func testConcurrentSaves(t *testing.T, st scenarios.SavedStore) {
	const extra = 20
	scs := make([]scenarios.Scenario, scenarios.MaxSavedScenarios+extra)
	for i := range scs {
		scs[i] = scenario(fmt.Sprintf("c-%03d", i))
	}
	saved, full := 0, 0
	for _, err := range saveAll(st, scs) {
		switch {
		case err == nil:
			saved++
		case errors.Is(err, scenarios.ErrLibraryFull):
			full++
		default:
			t.Errorf("Save: %v", err)
		}
	}
	if saved != scenarios.MaxSavedScenarios || full != extra {
		t.Errorf("%d saved and %d refused as full, want %d and %d", saved, full, scenarios.MaxSavedScenarios, extra)
	}
	if got := names(t, st); len(got) != scenarios.MaxSavedScenarios {
		t.Errorf("%d listed, want %d", len(got), scenarios.MaxSavedScenarios)
	}
}

// testConcurrentSameName: one name saved by many at once is taken by
// exactly one, whose scenario stays.
func testConcurrentSameName(t *testing.T, st scenarios.SavedStore) {
	scs := make([]scenarios.Scenario, 10)
	for i := range scs {
		scs[i] = scenario("contested")
		scs[i].Description = fmt.Sprintf("Saver %d.", i)
	}
	var winner []int
	for i, err := range saveAll(st, scs) {
		switch {
		case err == nil:
			winner = append(winner, i)
		case !errors.Is(err, scenarios.ErrScenarioExists):
			t.Errorf("Save: %v", err)
		}
	}
	if len(winner) != 1 {
		t.Fatalf("saves %v succeeded, want exactly one", winner)
	}
	if got, _ := mustGet(t, st, "contested"); got.Description != scs[winner[0]].Description {
		t.Errorf("stored %q, want the winner's %q", got.Description, scs[winner[0]].Description)
	}
}

// testCopies: changing a scenario after saving it, or one Get returned,
// changes nothing stored.
func testCopies(t *testing.T, st scenarios.SavedStore) {
	sc := scenario("copied")
	mustSave(t, st, sc)
	sc.Rules[0].Timeline[1].Delay.Median = scenarios.Duration(time.Hour)
	got, _ := mustGet(t, st, "copied")
	got.Rules[1].Delay.Fixed = scenarios.Duration(time.Hour)
	got.Rules[0].Status = 500
	if again, _ := mustGet(t, st, "copied"); encoded(t, again) != encoded(t, scenario("copied")) {
		t.Errorf("changed through a copy: %s", encoded(t, again))
	}
}
