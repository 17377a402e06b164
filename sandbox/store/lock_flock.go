//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package store

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// fileLock is an exclusive advisory lock (flock) on the lock file beside a
// data file. It is taken on its own file rather than on the data file
// because the data file is replaced by a rename (buntdb's shrink, Reset):
// a lock on the old inode would not stop a process opening the new one.
// The kernel drops the lock when the process dies, however it dies, so a
// crash never leaves a stale lock behind; the file itself stays.
type fileLock struct {
	f *os.File
}

// lockPath is the lock file of the data file at path.
func lockPath(path string) string { return path + ".lock" }

// acquireLock takes the lock of the data file at path without waiting: a
// second sandbox on the same file must fail at once, not hang. It writes
// the holder's pid into the lock file so that the refusal can name it.
func acquireLock(path string) (*fileLock, error) {
	lp := lockPath(path)
	f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock file %s: %w", lp, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := readHolder(f)
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s holds its lock %s; stop that process or give this one another data file",
				ErrLocked, holder, lp)
		}
		return nil, fmt.Errorf("lock %s: %w", lp, err)
	}
	// Only the holder writes the file, so the pid there is always the
	// holder's. A failure here costs only the pid in a later message.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &fileLock{f: f}, nil
}

// readHolder describes the lock's holder from the pid it wrote.
func readHolder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid := strings.TrimSpace(string(b[:n]))
	if _, err := strconv.Atoi(pid); err != nil {
		return "a process"
	}
	return "process " + pid
}

// release drops the lock. The file stays: removing it would let a process
// that opened it before the removal lock a file nobody else can see.
func (l *fileLock) release() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("release lock: %w", err)
	}
	return nil
}
