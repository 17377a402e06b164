package scenarios

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"strconv"
)

// drawKey is what one match's random numbers derive from: the rule's seed
// and its match counter. Deriving them instead of drawing from a per-process
// PRNG is what lets replicas sharing rules through Redis decide the same
// whichever one answers: the counter is shared and atomic, so match n of a
// rule draws the same number everywhere. The rule id is deliberately left
// out: a rule re-added after a reset gets a new id and must replay the same
// sequence, as the seed alone decided it before.
func drawKey(seed uint64, match int64) string {
	return strconv.FormatUint(seed, 10) + ":" + strconv.FormatInt(match, 10)
}

// probabilityDraw is match's number in [0, 1): the first 52 bits of the
// SHA-1 of its drawKey. The Redis script computes exactly the same number
// with redis.sha1hex (see redis_scripts.go), so both implementations fire on
// the same matches. SHA-1 is a mixer here, not a security measure.
func probabilityDraw(seed uint64, match int64) float64 {
	sum := sha1.Sum([]byte(drawKey(seed, match)))
	// 13 hex digits are 52 bits: exact in a float64 and in Lua's numbers.
	h := hex.EncodeToString(sum[:7])[:13]
	v, _ := strconv.ParseUint(h, 16, 64) // 13 hex digits always parse
	return float64(v) / (1 << 52)
}

// matchRNG is the PRNG the delay of match is sampled from, seeded from the
// same drawKey so a seeded rule's delays replay across runs and replicas.
func matchRNG(seed uint64, match int64) *rand.Rand {
	sum := sha1.Sum([]byte("delay:" + drawKey(seed, match)))
	return rand.New(rand.NewPCG(binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint64(sum[8:16])))
}
