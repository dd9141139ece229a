package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/skiffcd/skiff/bench/internal/benchkit"
	"k8s.io/client-go/rest"
)

// apiMetrics reads the metrics of the run's kube-apiservers, the first
// control plane's first.
type apiMetrics struct {
	client *http.Client
	url    string
	// others are the other control planes' (with -clusters > 1).
	others []*apiMetrics
}

func newAPIMetrics(cfgs ...*rest.Config) (*apiMetrics, error) {
	var first *apiMetrics
	for _, cfg := range cfgs {
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return nil, err
		}
		hc.Timeout = 10 * time.Second
		m := &apiMetrics{client: hc, url: cfg.Host + "/metrics"}
		if first == nil {
			first = m
		} else {
			first.others = append(first.others, m)
		}
	}
	return first, nil
}

// total sums apiserver_request_total over all series of every control plane.
func (m *apiMetrics) total(ctx context.Context) (float64, error) {
	series, err := m.series(ctx, "apiserver_request_total")
	return benchkit.SumSeries(series), err
}

// series returns every series of metric, each summed over the control
// planes; the error tells which scrapes failed.
func (m *apiMetrics) series(ctx context.Context, metric string) (map[string]float64, error) {
	sum, err := benchkit.ScrapeSeries(ctx, m.client, m.url, metric)
	if len(m.others) == 0 {
		return sum, err
	}
	if sum == nil {
		sum = map[string]float64{}
	}
	errs := []error{err}
	for _, o := range m.others {
		series, err := benchkit.ScrapeSeries(ctx, o.client, o.url, metric)
		errs = append(errs, err)
		for k, v := range series {
			sum[k] += v
		}
	}
	return sum, errors.Join(errs...)
}

// skiffRequests sums client-go's rest_client_requests_total in skiff's own
// metrics, over every replica.
func skiffRequests(ctx context.Context, addrs []string) (float64, error) {
	series, err := scrapeSkiff(ctx, addrs, "rest_client_requests_total")
	return benchkit.SumSeries(series), err
}

// scrapeSkiff returns every series of metric in the metrics of the skiff
// servers at addrs, each summed over them. A replica without the metric
// (one that owns no app has no comparisons) adds nothing; the error tells
// which scrapes failed.
func scrapeSkiff(ctx context.Context, addrs []string, metric string) (map[string]float64, error) {
	sum := map[string]float64{}
	var errs []error
	for _, addr := range addrs {
		series, err := benchkit.ScrapeSeries(ctx, http.DefaultClient, "http://"+addr+"/metrics", metric)
		if err != nil {
			errs = append(errs, err)
		}
		for k, v := range series {
			sum[k] += v
		}
	}
	return sum, errors.Join(errs...)
}

// queueScrape holds controller-runtime's work queue sums and counts, by
// series (the queue's name).
type queueScrape struct{ waitSum, workSum, count map[string]float64 }

// scrapeQueues sums the queues over the replicas at metricsAddrs.
func scrapeQueues(ctx context.Context, metricsAddrs []string) queueScrape {
	var q queueScrape
	q.waitSum, _ = scrapeSkiff(ctx, metricsAddrs, "workqueue_queue_duration_seconds_sum")
	q.workSum, _ = scrapeSkiff(ctx, metricsAddrs, "workqueue_work_duration_seconds_sum")
	q.count, _ = scrapeSkiff(ctx, metricsAddrs, "workqueue_work_duration_seconds_count")
	return q
}

// queueDeltas formats, per queue that did work between two scrapes, the
// items done and their mean time waiting in the queue and being worked on:
// it tells whether a phase waits on workers or on the work.
func queueDeltas(before, after queueScrape) string {
	var names []string
	for k := range after.count {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, k := range names {
		n := after.count[k] - before.count[k]
		if n <= 0 {
			continue
		}
		wait := (after.waitSum[k] - before.waitSum[k]) / n
		work := (after.workSum[k] - before.workSum[k]) / n
		fmt.Fprintf(&b, "      %6.0f %s wait %s work %s\n", n, k,
			time.Duration(wait*float64(time.Second)).Round(time.Millisecond),
			time.Duration(work*float64(time.Second)).Round(time.Millisecond))
	}
	return b.String()
}

// comparisonCounts is a line with the increases of
// skiff_app_comparisons_total by outcome.
func comparisonCounts(before, after map[string]float64) string {
	var computed, reused float64
	for k, v := range after {
		switch d := v - before[k]; {
		case strings.Contains(k, `outcome="computed"`):
			computed += d
		case strings.Contains(k, `outcome="reused"`):
			reused += d
		}
	}
	return fmt.Sprintf("  comparisons: %.0f computed, %.0f reused\n", computed, reused)
}
