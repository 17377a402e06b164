package exchange_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/exchange"
)

func TestAbortableTurnsTheAbortIntoAValue(t *testing.T) {
	if !exchange.Abortable(func() { panic(http.ErrAbortHandler) }) {
		t.Error("an aborted answer was not reported as aborted")
	}
	if exchange.Abortable(func() {}) {
		t.Error("an answer that returned was reported as aborted")
	}
}

func TestAbortableLetsOtherPanicsGoOn(t *testing.T) {
	bug := errors.New("a bug")
	defer func() {
		if v := recover(); v != bug {
			t.Errorf("recovered %v, want the handler's own panic to go on", v)
		}
	}()
	exchange.Abortable(func() { panic(bug) })
	t.Error("Abortable swallowed a panic that was not an abort")
}
