package testutil

import (
	"sync"
	"testing"
)

func TestLockedBufferTakesConcurrentWrites(t *testing.T) {
	var b LockedBuffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				_, _ = b.Write([]byte("x"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := len(b.String()); got != 800 {
		t.Errorf("%d bytes, want 800", got)
	}
}

func TestJWTClaimsDecodesThePayload(t *testing.T) {
	// {"alg":"none"}.{"azp":"a","n":1}.
	claims := JWTClaims(t, "eyJhbGciOiJub25lIn0.eyJhenAiOiJhIiwibiI6MX0.")
	if claims["azp"] != "a" || claims["n"] != float64(1) {
		t.Errorf("claims %v", claims)
	}
}
