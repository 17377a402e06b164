package sandbox

import "github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"

// JournalEntry is one journaled request (see package journal).
type JournalEntry = journal.Entry
