package benchkit

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// SumSeries sums every series of a scrape.
func SumSeries(series map[string]float64) float64 {
	sum := 0.0
	for _, v := range series {
		sum += v
	}
	return sum
}

// ErrNoSeries is ScrapeSeries' error for a metric with no series.
var ErrNoSeries = errors.New("no series")

// ScrapeSeries returns every series of metric, by its labels.
func ScrapeSeries(ctx context.Context, hc *http.Client, url, metric string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	series := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, metric+"{") && !strings.HasPrefix(line, metric+" ") {
			continue
		}
		fields := strings.Fields(line[strings.LastIndex(line, "}")+1:])
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("parsing %q: %w", line, err)
		}
		series[line[len(metric):strings.LastIndex(line, "}")+1]] += v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(series) == 0 {
		return nil, fmt.Errorf("%w of %s in %s", ErrNoSeries, metric, url)
	}
	return series, nil
}

// Deltas are the per-series increases between two scrapes (a series that
// did not grow is left out).
func Deltas(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if dv := v - before[k]; dv > 0 {
			out[k] = dv
		}
	}
	return out
}

// SumDeltas sums the per-series increases between two scrapes.
func SumDeltas(before, after map[string]float64) float64 {
	return SumSeries(Deltas(before, after))
}

// ByVerbResource folds apiserver_request_total's series by verb, resource,
// subresource and dry run (dropping code, scope, version and component).
func ByVerbResource(series map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range series {
		labels := SeriesLabels(k)
		key := labels["verb"] + " " + labels["resource"]
		if labels["subresource"] != "" {
			key += "/" + labels["subresource"]
		}
		if labels["dry_run"] != "" {
			key += " (dry run)"
		}
		out[key] += v
	}
	return out
}

// SeriesLabels splits a series' labels, as ScrapeSeries keys it
// ({name="value",...}), into a map.
func SeriesLabels(series string) map[string]string {
	labels := map[string]string{}
	for _, kv := range strings.Split(strings.Trim(series, "{}"), ",") {
		if name, val, ok := strings.Cut(kv, "="); ok {
			labels[name] = strings.Trim(val, `"`)
		}
	}
	return labels
}

// TopDeltas formats the n largest per-series increases between two scrapes.
func TopDeltas(before, after map[string]float64, n int) string {
	type kv struct {
		k string
		v float64
	}
	var d []kv
	for k, v := range Deltas(before, after) {
		d = append(d, kv{k, v})
	}
	sort.Slice(d, func(i, j int) bool { return d[i].v > d[j].v })
	var b strings.Builder
	for i := 0; i < len(d) && i < n; i++ {
		fmt.Fprintf(&b, "      %6.0f %s\n", d[i].v, d[i].k)
	}
	return b.String()
}
