package testutil

import "os"

// SandboxBinaryEnv names the environment variable through which ./test
// hands the packages that run the built command (e2e and
// cmd/referrals-sandbox) one binary, built once for both: each package
// builds its own only when it is unset, as under a plain go test. The
// binary must be built as cmd/referrals-sandbox's tests build theirs
// (static, trimmed, stripped, with their version stamp), which they check.
const SandboxBinaryEnv = "SANDBOX_TEST_BINARY"

// PrebuiltSandbox returns the binary SandboxBinaryEnv names, or "" when it
// is unset.
func PrebuiltSandbox() string { return os.Getenv(SandboxBinaryEnv) }
