package sandbox

import (
	"context"
	"fmt"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
)

// seed loads the fixtures' records into an empty store. A store that already
// holds data (a --data file from an earlier run) is left as it is.
func seed(ctx context.Context, st store.Store, records *store.EncodedSet) error {
	empty, err := st.Empty(ctx)
	if err != nil {
		return fmt.Errorf("check store: %w", err)
	}
	if !empty {
		return nil
	}
	if err := store.SeedFrom(ctx, st, records); err != nil {
		return fmt.Errorf("load fixtures into the store: %w", err)
	}
	return nil
}
