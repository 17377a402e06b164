package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// GrowthReport is one run of bench/run --growth: what a request, a start
// and resident memory cost against the number of stored referrals.
type GrowthReport struct {
	Time     string      `json:"time"`
	Host     Host        `json:"host"`
	Settings Settings    `json:"settings"`
	Rows     []GrowthRow `json:"rows"`
}

// GrowthRow is one size. Rates are medians of the rounds, CPU the server's
// time per request (steadier than a rate on a shared machine).
type GrowthRow struct {
	Records int `json:"records"`
	// SeedSeconds is the first start on an empty --data file with
	// --fixtures of Records referrals: exec to healthy, the records
	// written to the file.
	SeedSeconds float64 `json:"seedSeconds,omitempty"`
	// StartSeconds is a restart on that --data file alone: exec to the
	// first 200 of /__sandbox/health, the median of StartSecondsEach.
	StartSeconds float64 `json:"startSeconds,omitempty"`
	// StartSecondsEach are the growthRestarts restarts' times, in order
	// (absent from runs before 26 November 2026, which restarted once).
	StartSecondsEach []float64 `json:"startSecondsEach,omitempty"`
	// RSSMB is the last restarted sandbox's resident memory once healthy.
	RSSMB float64 `json:"rssMB,omitempty"`
	// The first page of GET /api/v1/referrals/?limit=50.
	ListRate      float64 `json:"listRate,omitempty"`
	ListCPUMicros float64 `json:"listCpuMicrosPerRequest,omitempty"`
	// GET /api/v1/referrals/{trialId}/{outcomesId} of one stored record.
	ReadRate      float64 `json:"readRate,omitempty"`
	ReadCPUMicros float64 `json:"readCpuMicrosPerRequest,omitempty"`
	Error         string  `json:"error,omitempty"`
}

// measureGrowth measures each of cfg.growthSizes in turn; a size that
// fails (a start slower than cfg.growthTimeout, say) records its error and
// the run goes on to the next.
func (r *runner) measureGrowth(ctx context.Context) (GrowthReport, error) {
	rep := GrowthReport{
		Time: r.clk.Now().UTC().Format(time.RFC3339),
		Host: r.host(),
		Settings: Settings{
			Rounds: r.cfg.rounds, DurationSec: r.cfg.duration.Seconds(), WarmupSec: r.cfg.warmup.Seconds(),
			Threads: r.cfg.threads, Connections: r.cfg.connections, Quick: r.cfg.quick,
		},
	}
	if err := r.setUp(ctx); err != nil {
		return rep, err
	}
	defer r.tearDown()
	for _, n := range r.cfg.growthSizes {
		row := r.growthRow(ctx, n)
		if row.Error != "" {
			r.logf("growth %d: %s", n, firstLines(row.Error, 3))
		}
		rep.Rows = append(rep.Rows, row)
		if ctx.Err() != nil {
			return rep, fmt.Errorf("interrupted: %w", ctx.Err())
		}
	}
	rep.Host.LoadAfter = loadAverage()
	return rep, nil
}

// growthRestarts is how many times growthRow restarts a size on its data
// file. One restart's time to healthy swung by a second between runs of
// the same binary at a million referrals (3.5 and 4.0 s), so the median
// of three is recorded.
const growthRestarts = 3

// growthRow measures one size: seed a data file, restart on it
// (growthRestarts times), then load a list page and a single read in turn.
func (r *runner) growthRow(ctx context.Context, n int) GrowthRow {
	row := GrowthRow{Records: n}
	fail := func(err error) GrowthRow {
		row.Error = err.Error()
		return row
	}
	dir, err := r.generate(ctx, n)
	if err != nil {
		return fail(err)
	}
	data := filepath.Join(r.work, fmt.Sprintf("growth-%d.db", n))
	r.logf("growth %d: first start, seeding %s", n, filepath.Base(data))
	start := r.clk.Now()
	s, err := r.ps.startSandbox(ctx, r.bin, r.cfg.growthTimeout, "--fixtures", dir, "--data", data)
	if err != nil {
		return fail(fmt.Errorf("first start: %w", err))
	}
	row.SeedSeconds = r.clk.Now().Sub(start).Seconds()
	r.ps.stop(s.proc)
	for i := range growthRestarts {
		if i > 0 {
			r.ps.stop(s.proc)
		}
		r.logf("growth %d: restart %d of %d on the data file", n, i+1, growthRestarts)
		start = r.clk.Now()
		s, err = r.ps.startSandbox(ctx, r.bin, r.cfg.growthTimeout, "--data", data)
		if err != nil {
			return fail(fmt.Errorf("restart %d: %w", i+1, err))
		}
		row.StartSecondsEach = append(row.StartSecondsEach, r.clk.Now().Sub(start).Seconds())
	}
	defer r.ps.stop(s.proc)
	row.StartSeconds = median(row.StartSecondsEach)
	rss, err := s.rssBytes()
	if err != nil {
		return fail(err)
	}
	row.RSSMB = float64(rss) / 1e6
	r.logf("growth %d: seeded in %.2f s, restarted in %.2f s, %.0f MB resident", n, row.SeedSeconds, row.StartSeconds, row.RSSMB)
	token, err := fetchToken(ctx, s.base)
	if err != nil {
		return fail(err)
	}
	auth := []string{"Authorization: Bearer " + token}
	one, err := firstReferral(ctx, s.base, token)
	if err != nil {
		return fail(err)
	}
	pid := s.cmd.Process.Pid
	listKey, readKey := "growth_list_"+strconv.Itoa(n), "growth_read_"+strconv.Itoa(n)
	r.runLoads(ctx, []load{
		{key: listKey, pid: pid, job: fixedJob(wrkJob{url: s.base + "/api/v1/referrals/?limit=50", headers: auth})},
		{key: readKey, pid: pid, job: fixedJob(wrkJob{url: s.base + one, headers: auth})},
	})
	for _, f := range []struct {
		key       string
		rate, cpu *float64
	}{{listKey, &row.ListRate, &row.ListCPUMicros}, {readKey, &row.ReadRate, &row.ReadCPUMicros}} {
		res := r.res.get(f.key)
		if res.Error != "" {
			return fail(fmt.Errorf("%s: %s", f.key, res.Error))
		}
		*f.rate, *f.cpu = res.Value, res.CPUMicrosPerReq
	}
	return row
}

// firstReferral returns the path of the first referral the listing shows.
func firstReferral(ctx context.Context, base, token string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/referrals/?limit=1", nil)
	if err != nil {
		return "", fmt.Errorf("list request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return "", fmt.Errorf("list request: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("list: status %d, %v: %s", resp.StatusCode, err, body)
	}
	var page struct {
		Referrals []struct {
			TrialID    string `json:"trialId"`
			OutcomesID string `json:"outcomesId"`
		} `json:"referrals"`
	}
	if err := json.Unmarshal(body, &page); err != nil || len(page.Referrals) == 0 || page.Referrals[0].OutcomesID == "" {
		return "", fmt.Errorf("list: no referral to read (%v): %s", err, body)
	}
	first := page.Referrals[0]
	return "/api/v1/referrals/" + first.TrialID + "/" + first.OutcomesID, nil
}

// parseSizes reads --growth-sizes: positive counts separated by commas.
func parseSizes(s string) ([]int, error) {
	var sizes []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--growth-sizes: %q is not a positive count", f)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}
