package rediscall

import (
	"encoding/hex"
	"math/rand/v2"
)

// CallID returns a random id for one script call: 128 bits, so two calls
// never share one.
func CallID() string {
	var b [16]byte
	for i := range 2 {
		v := rand.Uint64()
		for j := range 8 {
			b[i*8+j] = byte(v >> (8 * j))
		}
	}
	return hex.EncodeToString(b[:])
}
