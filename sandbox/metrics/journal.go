package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// journalCollector reports the journal's size at each scrape. While the
// journal cannot be reached (Redis down) it reports nothing rather than a
// false zero; redis_errors_total says why.
type journalCollector struct{ log journal.Log }

var (
	journalEntriesDesc = prometheus.NewDesc(namespace+"_journal_entries",
		"Requests the journal keeps now.", nil, nil)
	journalBytesDesc = prometheus.NewDesc(namespace+"_journal_bytes",
		"Bytes the kept journal entries count against --journal-bytes.", nil, nil)
)

// Describe sends the journal series' descriptions.
func (c journalCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- journalEntriesDesc
	ch <- journalBytesDesc
}

// Collect reads the journal's size when scraped.
func (c journalCollector) Collect(ch chan<- prometheus.Metric) {
	// A scrape has no context of its own; Prometheus's default scrape
	// timeout is 10 s, so give up well before it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	entries, bytes, err := c.log.Usage(ctx)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(journalEntriesDesc, prometheus.GaugeValue, float64(entries))
	ch <- prometheus.MustNewConstMetric(journalBytesDesc, prometheus.GaugeValue, float64(bytes))
}
