package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tidwall/buntdb"
)

// resetFile replaces a file store's records with the set's so that a crash
// at any moment leaves the data file whole: the old records or the new
// ones, never a mix. Writing the reset into the open file (a flush, then
// every record) could be cut anywhere by a SIGKILL, and buntdb would load
// the flush and whatever records made it.
//
// Instead the new content is written to a separate file (resetPath),
// fsynced, and renamed over the data file, which is atomic; the directory
// is fsynced so that the rename also survives a power loss. buntdb keeps
// its file open and would go on appending to the replaced one, so the
// store is closed before the rename and opened again after it, under the
// exclusive lock, which holds every other call of the store back
// meanwhile. Building the new file needs no such lock (only resetMu, as
// two resets would share it), so calls go on until the swap: what they
// write then is replaced by the reset, as it would have been a moment
// later. A set that does not load (conflict, invalid record) is refused
// before anything is replaced.
func (s *BuntStore) resetFile(e *EncodedSet) error {
	s.resetMu.Lock()
	defer s.resetMu.Unlock()
	tmp := resetPath(s.path)
	if err := writeSnapshot(tmp, s.path, e); err != nil {
		return errors.Join(fmt.Errorf("reset store: %w", err), removeIfExists(tmp))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		// The lock on the data file is gone: it is not ours to replace.
		return errors.Join(fmt.Errorf("reset store: %w", buntdb.ErrDatabaseClosed), removeIfExists(tmp))
	}
	if err := s.db.Close(); err != nil {
		return errors.Join(fmt.Errorf("reset store: close the old file: %w", err), removeIfExists(tmp), s.reopen())
	}
	if err := os.Rename(tmp, s.path); err != nil {
		// Nothing was replaced: go on with the old file.
		err = fmt.Errorf("reset store: %w", err)
		return errors.Join(err, removeIfExists(tmp), s.reopen())
	}
	if err := syncDir(filepath.Dir(s.path)); err != nil {
		s.cfg.logger.Warn("data file: the reset is in place but may not survive a power loss", "file", s.path, "err", err)
	}
	if err := s.reopen(); err != nil {
		return fmt.Errorf("reset store: %w", err)
	}
	return nil
}

// reopen opens the data file again after Reset closed it, with a new
// listing index built from it. The caller holds mu. Should it fail, db stays closed and every later call fails with
// buntdb's "database closed" until the sandbox restarts.
func (s *BuntStore) reopen() error {
	db, idx, err := openDB(s.path, s.cfg)
	if err != nil {
		return fmt.Errorf("open the data file again: %w", err)
	}
	held, err := countUsage(db)
	if err != nil {
		return errors.Join(fmt.Errorf("count usage of the data file: %w", err), db.Close())
	}
	s.db, s.idx, s.held = db, idx, held
	return nil
}

// writeSnapshot writes e's records to path as a complete buntdb file
// and fsyncs it. The records are loaded into an in-memory buntdb first,
// which checks them exactly as Load does, and saved from there, so the file
// is in buntdb's own format. The file gets the permissions of like, the
// data file it will replace.
func writeSnapshot(path, like string, e *EncodedSet) error {
	mem, err := buntdb.Open(MemoryPath)
	if err != nil {
		return fmt.Errorf("build new content: %w", err)
	}
	defer mem.Close()
	if err := mem.Update(func(tx *buntdb.Tx) error { return loadEncoded(&storeTx{Tx: tx}, e) }); err != nil {
		return err
	}
	perm := os.FileMode(0o644)
	if fi, err := os.Stat(like); err == nil {
		perm = fi.Mode().Perm()
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	err = mem.Save(f)
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		return errors.Join(fmt.Errorf("write %s: %w", path, err), f.Close())
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	return nil
}

// removeIfExists removes path; a file that is not there is no error.
func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}
