package storetest

import (
	"strings"
	"testing"

	"github.com/tidwall/buntdb"
)

// DamageRecords replaces the JSON of the records at keys in the closed
// data file at path with text that does not decode, keeping their sort
// lines (so listings still reach them), as a hand edit or a bad disk
// might. Keys are as the file lays them out: r:<outcomesId>:<clientId> and
// q:<externalSourceId>:<clientId>, with ':' and '%' in ids escaped.
func DamageRecords(t *testing.T, path string, keys ...string) {
	t.Helper()
	db, err := buntdb.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *buntdb.Tx) error {
		for _, key := range keys {
			v, err := tx.Get(key)
			if err != nil {
				return err
			}
			line, _, _ := strings.Cut(v, "\n")
			if _, _, err := tx.Set(key, line+"\n{\"outcomesId\": 12,", nil); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("damage records %v of %s: %v", keys, path, err)
	}
}
