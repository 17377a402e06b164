package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// writeHAR copies GET /__sandbox/requests.har for the flags' filters to w
// as it arrives: the archive holds every match the journal keeps, which
// can be larger than an admin answer the CLI reads into memory.
func (c *requestsConfig) writeHAR(ctx context.Context, w io.Writer) error {
	q := c.filters()
	if c.afterID > 0 {
		q.Set("afterId", strconv.FormatInt(c.afterID, 10))
	}
	path := sandbox.HARPath
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.endpoint(path), nil)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, c.withCAHint(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
		return adminError(http.MethodGet, path, resp.StatusCode, body)
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("GET %s: copy the archive: %w", path, err)
	}
	return nil
}
