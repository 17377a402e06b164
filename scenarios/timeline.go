package scenarios

import (
	"fmt"
	"time"
)

// Timeline bounds: an incident replayed on a laptop is a handful of
// phases of minutes or hours, not a schedule for a year.
const (
	// MaxPhases bounds a timeline's phases.
	MaxPhases = 32
	// MaxPhaseDuration bounds one phase's "for".
	MaxPhaseDuration = 7 * 24 * time.Hour
)

// Phase is one stretch of a timeline: for For on the rule's clock, the
// rule has these effects. A phase without any effect answers normally (a
// lull between two bursts).
type Phase struct {
	For               Duration `json:"for"`
	Status            int      `json:"status,omitempty"`
	Error             string   `json:"error,omitempty"`
	RetryAfterSeconds int      `json:"retryAfterSeconds,omitempty"`
	Reason            string   `json:"reason,omitempty"`
	Delay             *Delay   `json:"delay,omitempty"`
	Fault             Fault    `json:"fault,omitempty"`
	Probability       float64  `json:"probability,omitempty"`
	Seed              uint64   `json:"seed,omitempty"`
}

// TimelineNow is where a timeline rule is, as GET /__sandbox/scenarios
// shows it.
type TimelineNow struct {
	// Phase is the index of the current phase in the timeline.
	Phase int `json:"phase"`
	// TimeLeft is how long the current phase lasts yet, on the rule's
	// clock.
	TimeLeft Duration `json:"timeLeft"`
	// StartedAt is when the timeline started (its activation), on the
	// rule's clock: the client's own when the rule is bound to one.
	StartedAt time.Time `json:"startedAt"`
}

// hasEffect reports whether the phase changes the answer at all.
func (p Phase) hasEffect() bool {
	return p.Status != 0 || p.Error != "" || p.Delay != nil || p.Fault != FaultNone
}

// hasEffect reports whether the rule (a timeline's phase rule) changes
// the answer at all.
func (r Rule) hasEffect() bool {
	return r.Status != 0 || r.Error != "" || r.Delay != nil || r.Fault != FaultNone
}

// atPhase returns r with phase i's effects in place of its timeline: the
// plain rule the engines decide with while the phase lasts.
func (r Rule) atPhase(i int) Rule {
	p := r.Timeline[i]
	r.Timeline = nil
	r.Status, r.Error, r.RetryAfterSeconds, r.Reason = p.Status, p.Error, p.RetryAfterSeconds, p.Reason
	r.Delay, r.Fault, r.Probability, r.Seed = p.Delay, p.Fault, p.Probability, p.Seed
	return cloneRule(r)
}

// phaseAt finds the phase elapsed time into the timeline, and how long it
// lasts yet; ok is false once the last phase is over. A clock moved back
// before the start counts as the start.
func (r Rule) phaseAt(elapsed time.Duration) (i int, left time.Duration, ok bool) {
	elapsed = max(elapsed, 0)
	var end time.Duration
	for i, p := range r.Timeline {
		end += p.For.D()
		if elapsed < end {
			return i, end - elapsed, true
		}
	}
	return 0, 0, false
}

// validateTimeline checks a timeline rule: its phases, and that the
// effects and counting are in the phases, not beside them.
func (r Rule) validateTimeline() error {
	if len(r.Timeline) > MaxPhases {
		return fieldErr("timeline", "%d phases; at most %d", len(r.Timeline), MaxPhases)
	}
	if r.Status != 0 || r.Error != "" || r.RetryAfterSeconds != 0 || r.Reason != "" || r.Delay != nil ||
		r.Fault != FaultNone || r.Probability != 0 || r.Seed != 0 {
		return fieldErr("timeline", "the effects (status, error, retryAfterSeconds, reason, delay, fault, probability, seed) go in the phases, not beside them")
	}
	if r.Times != 0 || r.After != 0 || r.PerClient {
		return fieldErr("timeline", "cannot be combined with times, after or perClient: a timeline retires after its last phase")
	}
	effects := 0
	for i, p := range r.Timeline {
		if p.For <= 0 || p.For.D() > MaxPhaseDuration {
			return fieldErr(fmt.Sprintf("timeline[%d].for", i), "%s must be more than 0 and at most %s", p.For, MaxPhaseDuration)
		}
		if !p.hasEffect() {
			if p.RetryAfterSeconds != 0 || p.Reason != "" || p.Probability != 0 || p.Seed != 0 {
				return fieldErr(fmt.Sprintf("timeline[%d]", i), "sets no status, error, delay or fault for its other fields to apply to")
			}
			continue
		}
		effects++
		phase := r.atPhase(i)
		for _, check := range []func() error{phase.validateEffects, phase.validateCounting} {
			if err := check(); err != nil {
				if fe, ok := err.(*FieldError); ok {
					return fieldErr(fmt.Sprintf("timeline[%d].%s", i, fe.Field), "%s", fe.Message)
				}
				return err
			}
		}
	}
	if effects == 0 {
		return fieldErr("timeline", "at least one phase must set a status, error, delay or fault")
	}
	return nil
}

// firstEffect is the first phase that changes the answer: what the
// per-request form of a scenario (X-Sandbox-Scenario) applies, since one
// request has no timeline to move through.
func (r Rule) firstEffect() (int, bool) {
	for i, p := range r.Timeline {
		if p.hasEffect() {
			return i, true
		}
	}
	return 0, false
}

// clientClock is the time of a client's own clock ("" for the sandbox
// clock).
type clientClock func(clientID string) time.Time

// timelineNow places a timeline entry on its clock: the phase rule that
// applies now, where it is, and false once the timeline is over. The
// clock is the bound client's (the rule's clientId) or the sandbox's.
func (en *entry) timelineNow(now clientClock) (Rule, TimelineNow, bool) {
	i, left, ok := en.rule.phaseAt(now(en.rule.ClientID).Sub(en.startedAt))
	if !ok {
		return Rule{}, TimelineNow{}, false
	}
	return en.rule.atPhase(i), TimelineNow{Phase: i, TimeLeft: Duration(left), StartedAt: en.startedAt}, true
}

// ended reports whether en is a timeline whose last phase is over.
func (en *entry) ended(now clientClock) bool {
	if len(en.rule.Timeline) == 0 {
		return false
	}
	_, _, ok := en.timelineNow(now)
	return !ok
}

// statusAt is en's status with, for a timeline, where it is now.
func (en *entry) statusAt(now clientClock) RuleStatus {
	s := en.status()
	if len(en.rule.Timeline) > 0 {
		if _, at, ok := en.timelineNow(now); ok {
			s.TimelineNow = &at
		}
	}
	return s
}
