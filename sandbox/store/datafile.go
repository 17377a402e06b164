package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/tidwall/buntdb"
)

// resetPath is where Reset builds the next data file before renaming it
// over the current one. A file left there was never renamed into place: a
// crash interrupted its reset, and the data file is still the old one.
func resetPath(path string) string { return path + ".reset" }

// openFile locks the data file at path and opens it. A leftover reset file
// is removed, damage that buntdb would cut more than a torn tail at is
// refused, and a torn tail that buntdb cuts is logged.
func openFile(path string, cfg config) (*buntdb.DB, *listIndex, *fileLock, error) {
	lock, err := acquireLock(path)
	if err != nil {
		return nil, nil, nil, err
	}
	// Only the lock holder may touch the reset file: it might be another
	// process's reset in progress otherwise.
	switch err := os.Remove(resetPath(path)); {
	case err == nil:
		cfg.logger.Warn("data file: removed the file of a reset a crash interrupted; the data is as it was before that reset",
			"file", path, "removed", resetPath(path))
	case !errors.Is(err, fs.ErrNotExist):
		return nil, nil, nil, errors.Join(fmt.Errorf("remove unfinished reset file: %w", err), lock.release())
	}
	// Checked once, here, where a file the sandbox did not write may come
	// in: a Reset reopens a file it has just written and fsynced itself.
	if err := checkDamage(path); err != nil {
		return nil, nil, nil, errors.Join(err, lock.release())
	}
	db, idx, err := openDB(path, cfg)
	if err != nil {
		return nil, nil, nil, errors.Join(err, lock.release())
	}
	return db, idx, lock, nil
}

// openDB opens buntdb on path, configures it and builds the listing index
// of its records.
//
// buntdb loads the file command by command; when the last command ends
// early (a write cut short by a crash or a full disk), it truncates the file
// to the last whole command and carries on without a word. The commands cut
// were never acknowledged (a transaction is acknowledged only once it is
// written, and fsynced under SyncPolicy Always), but the operator should
// know a crash happened, so the size before and after opening is compared
// and the cut logged. openFile refuses first a file whose damage would
// make buntdb cut more than that torn tail (checkDamage).
func openDB(path string, cfg config) (*buntdb.DB, *listIndex, error) {
	before := fileSize(path)
	db, err := buntdb.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	if after := fileSize(path); after < before {
		cfg.logger.Warn("data file: the last write was incomplete (the process died while writing it); dropped it, every complete record is kept",
			"file", path, "bytes_dropped", before-after, "bytes_kept", after)
	}
	if err := cfg.apply(db); err != nil {
		return nil, nil, errors.Join(err, db.Close())
	}
	idx, err := buildIndex(db)
	if err != nil {
		return nil, nil, errors.Join(err, db.Close())
	}
	return db, idx, nil
}

// fileSize is the size of the file at path, 0 when it cannot be read (a
// file about to be created).
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// syncDir fsyncs a directory, so that a rename in it survives a power loss,
// not only a crash of the process.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	if err := d.Sync(); err != nil {
		return errors.Join(fmt.Errorf("sync directory %s: %w", dir, err), d.Close())
	}
	return d.Close()
}
