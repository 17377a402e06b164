package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// recordOp is one acknowledged write of a referral, or one read of it:
// value is its body as answered, "" for a 404.
type recordOp struct {
	client    int
	key       string
	write     bool
	value     string
	call, ret int64
}

// recordModel is a register per key (a referral's URL), initially
// missing: a write sets it, a read must return it. Referrals are never
// changed by this workload, so a read of an acknowledged write that
// answers 404, or a body other than the acknowledged one, is an anomaly.
var recordModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			k := op.Input.(recordOp).key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() any { return "" },
	Step: func(state, input, output any) (bool, any) {
		op := input.(recordOp)
		if op.write {
			return true, op.value
		}
		return output.(string) == state.(string), state
	},
	DescribeOperation: func(input, output any) string {
		op := input.(recordOp)
		if op.write {
			return "write " + op.key
		}
		return fmt.Sprintf("read %s -> %d bytes", op.key, len(output.(string)))
	},
}

// checkRecords checks the records' history for linearizability and
// records each non-linearizable key as an anomaly.
func (h *faultHarness) checkRecords() {
	h.mu.Lock()
	history := make([]porcupine.Operation, 0, len(h.history))
	for _, op := range h.history {
		history = append(history, porcupine.Operation{ClientId: op.client, Input: op, Output: op.value, Call: op.call, Return: op.ret})
	}
	h.mu.Unlock()
	res, info := porcupine.CheckOperationsVerbose(recordModel, history, time.Minute)
	switch res {
	case porcupine.Ok:
	case porcupine.Unknown:
		h.anomaly("records: porcupine could not decide within a minute (%d operations)", len(history))
	default:
		h.anomaly("records: the history of %d operations is not linearizable (%d partitions); an acknowledged referral was read as missing or changed",
			len(history), len(info.PartialLinearizations()))
	}
}

// TestRecordModelCatchesLoss: the records checker accepts a write read
// back, and flags an acknowledged write later read as missing, or read
// with another body, so the fault suite cannot pass by checking nothing.
func TestRecordModelCatchesLoss(t *testing.T) {
	w := recordOp{key: "/r/1", write: true, value: "a", call: 1, ret: 2}
	read := func(v string, at int64) porcupine.Operation {
		return porcupine.Operation{Input: recordOp{key: "/r/1", value: v, call: at, ret: at + 1}, Output: v, Call: at, Return: at + 1}
	}
	write := porcupine.Operation{Input: w, Output: "a", Call: 1, Return: 2}
	for _, tc := range []struct {
		name    string
		history []porcupine.Operation
		ok      bool
	}{
		{"read back", []porcupine.Operation{write, read("a", 3), read("a", 5)}, true},
		{"never visible", []porcupine.Operation{write, read("", 3)}, false},
		{"visible then gone", []porcupine.Operation{write, read("a", 3), read("", 5)}, false},
		{"changed", []porcupine.Operation{write, read("b", 3)}, false},
	} {
		if got := porcupine.CheckOperations(recordModel, tc.history); got != tc.ok {
			t.Errorf("%s: linearizable %v, want %v", tc.name, got, tc.ok)
		}
	}
}
