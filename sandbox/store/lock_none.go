//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package store

// fileLock does nothing where flock does not exist: the data file is not
// protected against a second process there (see docs/command-line.md).
type fileLock struct{}

func acquireLock(string) (*fileLock, error) { return &fileLock{}, nil }

func (*fileLock) release() error { return nil }
