package scenarios

import (
	"context"
	"fmt"
	"strconv"

	"github.com/referrals-sandbox/referrals-sandbox/internal/rediscall"
)

// Decide implements Engine.Decide on the shared state: the request is
// matched against the cached index, and each candidate in order counts one
// match in Redis (fireScript) until one fires.
//
// Each script call carries a fresh call id, and the script records its
// decision under it: go-redis sends a command again when its read timed out
// (MaxRetries), while the first one may still run once Redis resumes, so
// without the id a stalled Redis made one request count twice. With it, the
// retry finds the decision the first run made and returns that one, so a
// times: N rule forces exactly N answers and each decision reaches the
// request it was made for.
//
// go-redis gives up on a stall in some cases (a new connection's handshake
// that times out is not retried), so Decide itself sends a call again, with
// the same id, while Redis stalls or fails for up to stallBudget: a script
// that ran late, or on a node that died before answering, then still
// reaches its request.
func (s *RedisEngine) Decide(ctx context.Context, req Request) (Decision, bool, error) {
	stall := rediscall.NewBudget(s.stallBudget)
	var index *ruleIndex
	err := stall.Ride(ctx, func() error {
		var err error
		index, err = s.current(ctx)
		return err
	})
	if err != nil {
		return Decision{}, false, err
	}
	for _, en := range index.candidates(req) {
		r := en.rule
		if len(r.Timeline) > 0 {
			// The phase is a function of the shared clocks and the start
			// stored with the rule, so every replica picks the same one.
			phase, _, live := en.timelineNow(s.clientNow)
			if !live || !phase.hasEffect() || !phase.matchesBesidesPath(req) {
				continue // retired (leaves Redis with the next change), or a lull
			}
			r = phase
		}
		perClient := "0"
		if r.PerClient {
			perClient = "1"
		}
		keys := []string{s.defsKey, s.orderKey, s.verKey, s.counterKey(r.ID), s.keys + "call:" + rediscall.CallID()}
		var res []int64
		err := stall.Resend(ctx, func() error {
			cmd := fireScript.Run(ctx, s.rdb, keys,
				r.ID, req.counterKey(), r.After, r.Times, perClient,
				strconv.FormatFloat(r.Probability, 'g', -1, 64), strconv.FormatUint(r.Seed, 10),
				s.cfg.Clock.Now().UnixNano(), s.callTTL.Milliseconds())
			var err error
			res, err = cmd.Int64Slice()
			if rediscall.Unconfirmed(err) {
				res = int64s(cmd.Val())
			}
			return err
		})
		if rediscall.Unconfirmed(err) && len(res) == 2 {
			// The master made the decision and holds it; its replicas did
			// not confirm it within the budget (--redis-wait). A 503 would
			// leave the count spent and no request forced; delivering it
			// is exact unless this master too dies before replicating.
			err = nil
		}
		if err != nil {
			return Decision{}, false, fmt.Errorf("%w: count a match of rule %s: %w", ErrUnavailable, r.ID, rediscall.MarkUnconfirmed(err))
		}
		if len(res) != 2 {
			return Decision{}, false, fmt.Errorf("%w: fire script answered %v", ErrUnavailable, res)
		}
		if res[0] != 1 {
			continue // did not fire, or removed since the list was read
		}
		return r.decide(matchRNG(r.Seed, res[1])), true, nil
	}
	return Decision{}, false, nil
}

// int64s is a script's array answer as integers, nil if it is not one.
func int64s(v any) []int64 {
	vals, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]int64, 0, len(vals))
	for _, x := range vals {
		n, ok := x.(int64)
		if !ok {
			return nil
		}
		out = append(out, n)
	}
	return out
}
