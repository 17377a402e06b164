package scenarios

import (
	"context"
	"testing"
)

func TestCustomIDGenerator(t *testing.T) {
	e := New(Config{NewID: func() string { return "same" }})
	if _, err := e.Add(context.Background(), Rule{Status: 503}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Add(context.Background(), Rule{Status: 503}); err == nil {
		t.Error("a generator repeating itself should give an error, not a duplicate id")
	}
}
