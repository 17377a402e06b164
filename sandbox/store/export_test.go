package store

// CheckDamage exposes checkDamage to the benchmarks of package store_test.
var CheckDamage = checkDamage
