package scenarios

import (
	"fmt"
	"slices"
	"time"
)

// SlowAnswer is the shortest slowing an answer replays as a delay: a
// real service's answer behind the recording proxy always takes a few
// milliseconds, which is not an incident worth replaying.
const SlowAnswer = 50 * time.Millisecond

// Answer is one answer a client got, as the request journal records it:
// what a timeline needs to replay it.
type Answer struct {
	At                time.Time
	Endpoint          Endpoint
	Status            int
	RetryAfterSeconds int
	// Slowed is how long the answer was held back on purpose: a rule's
	// delay, or the real service's own time behind the recording proxy;
	// never the sandbox's own time, which a loaded host or Redis stretches.
	Slowed time.Duration
	Fault  Fault
}

// ReplayTimeline builds the named scenario that replays answers, the
// answers of the window [since, until): one timeline rule per endpoint
// (token, API, ping) whose phases reproduce, with their timing from the
// start of the window, the forced statuses (those a rule can force on
// that endpoint, with their Retry-After), the faults, and the answers
// slowed by SlowAnswer or more (as a fixed delay). Successive answers alike
// make one phase; the time between different ones is a lull. The
// timelines start at the window's first answer that replays as anything
// (on any endpoint, so the endpoints keep their timing relative to each
// other), not at since: a replay begins with the incident, not with the
// quiet minutes before it, and each rule's description says when that
// was. It is an error when the window holds nothing to replay or more
// changes than a timeline may hold (MaxPhases).
func ReplayTimeline(name, description string, answers []Answer, since, until time.Time) (Scenario, error) {
	sc := Scenario{Name: name, Description: description}
	since = firstEffect(answers, since, until)
	for _, ep := range []Endpoint{EndpointToken, EndpointAPI, EndpointPing} {
		var mine []Answer
		for _, a := range answers {
			if a.Endpoint == ep && !a.At.Before(since) && a.At.Before(until) {
				mine = append(mine, a)
			}
		}
		slices.SortStableFunc(mine, func(a, b Answer) int { return a.At.Compare(b.At) })
		phases := replayPhases(ep, mine, since, until)
		if !slices.ContainsFunc(phases, Phase.hasEffect) {
			continue
		}
		if len(phases) > MaxPhases {
			return Scenario{}, fieldErr("fromJournal", "the %s answers in the window change %d times; a timeline holds at most %d phases: narrow the window", ep, len(phases), MaxPhases)
		}
		sc.Rules = append(sc.Rules, Rule{
			Description: fmt.Sprintf("%s answers from %s", ep, since.UTC().Format(time.RFC3339)),
			Endpoint:    ep,
			Timeline:    phases,
		})
	}
	if len(sc.Rules) == 0 {
		return Scenario{}, fieldErr("fromJournal", "no answer in the window was a forced status, a fault or held back %s or more: nothing to replay", SlowAnswer)
	}
	return sc, validateScenario(sc)
}

// firstEffect is when the first answer in [since, until) that replays as
// something (a forced status, a fault, a slowing) was given, or until when
// none was.
func firstEffect(answers []Answer, since, until time.Time) time.Time {
	first := until
	for _, a := range answers {
		if !a.At.Before(since) && a.At.Before(first) && effectOf(a.Endpoint, a).hasEffect() {
			first = a.At
		}
	}
	return first
}

// replayPhases turns one endpoint's answers, in time order, into phases:
// each answer's effect lasts until the next answer (or until), and alike
// neighbours merge.
func replayPhases(ep Endpoint, answers []Answer, since, until time.Time) []Phase {
	var phases []Phase
	add := func(p Phase, from, to time.Time) {
		if !to.After(from) {
			return
		}
		p.For = Duration(to.Sub(from))
		if n := len(phases); n > 0 && sameEffect(phases[n-1], p) {
			phases[n-1].For += p.For
			return
		}
		phases = append(phases, p)
	}
	from := since
	for i, a := range answers {
		add(Phase{}, from, a.At) // a lull before the first answer
		to := until
		if i+1 < len(answers) {
			to = answers[i+1].At
		}
		add(effectOf(ep, a), a.At, to)
		from = to
	}
	add(Phase{}, from, until)
	return phases
}

// effectOf is the phase effect that reproduces answer a.
func effectOf(ep Endpoint, a Answer) Phase {
	var p Phase
	switch {
	case a.Fault != FaultNone && a.Fault.valid():
		p.Fault = a.Fault
	case a.Status != 0 && canForce(ep, a.Status):
		p.Status = a.Status
		if (a.Status == 429 || a.Status == 503) && a.RetryAfterSeconds > 0 {
			p.RetryAfterSeconds = min(a.RetryAfterSeconds, maxRetryAfterSeconds)
		}
	}
	if a.Slowed >= SlowAnswer && p.Fault != FaultHang {
		p.Delay = &Delay{Fixed: Duration(min(a.Slowed, MaxDelay))}
	}
	return p
}

// sameEffect reports whether two phases answer alike.
func sameEffect(a, b Phase) bool {
	a.For, b.For = 0, 0
	if (a.Delay == nil) != (b.Delay == nil) || a.Delay != nil && *a.Delay != *b.Delay {
		return false
	}
	a.Delay, b.Delay = nil, nil
	return a == b
}
