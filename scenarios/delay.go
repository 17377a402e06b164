package scenarios

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Delay limits. MaxDelay bounds every configured or requested delay so a typo
// cannot park a request for an hour; DefaultLognormalCap bounds the long tail
// of a lognormal delay when the rule gives no max.
const (
	MaxDelay            = 60 * time.Second
	DefaultLognormalCap = 30 * time.Second
	maxSigma            = 4.0
)

// Delay is added latency before the normal or forced answer. Exactly one form
// is used:
//   - fixed: always Fixed;
//   - uniform: anywhere in [Min, Max] (Min defaults to 0);
//   - lognormal: Median*exp(Sigma*N(0,1)), capped at Max (default
//     DefaultLognormalCap), the usual shape of real network latency.
type Delay struct {
	Fixed  Duration `json:"fixed,omitempty"`
	Min    Duration `json:"min,omitempty"`
	Max    Duration `json:"max,omitempty"`
	Median Duration `json:"median,omitempty"`
	Sigma  float64  `json:"sigma,omitempty"`
}

// validate checks that d uses exactly one form with sane bounds. Field names
// in errors are prefixed with "delay.".
func (d Delay) validate() error {
	for _, f := range []struct {
		name string
		v    Duration
	}{{"fixed", d.Fixed}, {"min", d.Min}, {"max", d.Max}, {"median", d.Median}} {
		if f.v < 0 {
			return fieldErr("delay."+f.name, "%s must not be negative", f.v)
		}
		if f.v.D() > MaxDelay {
			return fieldErr("delay."+f.name, "%s exceeds the maximum of %s", f.v, MaxDelay)
		}
	}
	if d.Sigma < 0 || d.Sigma > maxSigma || math.IsNaN(d.Sigma) {
		return fieldErr("delay.sigma", "%g must be between 0 and %g", d.Sigma, maxSigma)
	}
	switch {
	case d.Fixed > 0:
		if d.Min != 0 || d.Max != 0 || d.Median != 0 || d.Sigma != 0 {
			return fieldErr("delay.fixed", "cannot be combined with min, max, median or sigma")
		}
	case d.Median > 0:
		if d.Min != 0 {
			return fieldErr("delay.min", "cannot be combined with median (a lognormal delay takes median, sigma and an optional max cap)")
		}
		if d.Max != 0 && d.Max < d.Median {
			return fieldErr("delay.max", "cap %s is below median %s", d.Max, d.Median)
		}
	case d.Sigma > 0:
		return fieldErr("delay.median", "required with sigma")
	case d.Max > 0:
		if d.Min > d.Max {
			return fieldErr("delay.min", "%s is above max %s", d.Min, d.Max)
		}
	case d.Min > 0:
		return fieldErr("delay.max", "required with min")
	default:
		return fieldErr("delay", "set fixed, min and max, or median and sigma")
	}
	return nil
}

// sample draws one delay from d using rng, so seeded rules replay the same
// latencies. d must have passed validate.
func (d Delay) sample(rng *rand.Rand) time.Duration {
	switch {
	case d.Fixed > 0:
		return d.Fixed.D()
	case d.Median > 0:
		limit := DefaultLognormalCap
		if d.Max > 0 {
			limit = d.Max.D()
		}
		v := float64(d.Median) * math.Exp(d.Sigma*rng.NormFloat64())
		if v >= float64(limit) {
			return limit
		}
		return time.Duration(v)
	default:
		span := int64(d.Max - d.Min)
		return d.Min.D() + time.Duration(rng.Int64N(span+1))
	}
}

// ParseDelay reads the X-Sandbox-Delay header: a Go duration ("250ms",
// "1.5s") or plain milliseconds ("250"). Negative values and values above
// MaxDelay are refused.
func ParseDelay(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	// One message names the value once and shows the format once.
	bad := func(why string) error {
		return fmt.Errorf("%q %s; use a Go duration such as 250ms or 2s, or whole milliseconds, at most %s", s, why, MaxDelay)
	}
	if s == "" {
		return 0, bad("is empty")
	}
	var d time.Duration
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		switch {
		case ms < 0:
			return 0, bad("is negative")
		case ms > int64(MaxDelay/time.Millisecond):
			return 0, bad("exceeds the maximum")
		}
		d = time.Duration(ms) * time.Millisecond
	} else if d, err = time.ParseDuration(s); err != nil {
		return 0, bad("is not a delay")
	}
	switch {
	case d < 0:
		return 0, bad("is negative")
	case d > MaxDelay:
		return 0, bad("exceeds the maximum")
	}
	return d, nil
}
