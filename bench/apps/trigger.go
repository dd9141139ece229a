package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/bench/internal/benchkit"
)

// webhookSecret signs the bench's push events; skiff reads it from
// argocd-secret's webhook.github.secret.
const webhookSecret = "bench-webhook-secret"

// triggerRefresh asks skiff to refresh all n apps after a commit to
// repoURL: by one signed GitHub push event to the API at apiAddr, or by
// the refresh annotation on every Application.
func triggerRefresh(ctx context.Context, c client.Client, n int, apiAddr, repoURL string) error {
	if *trigger != "webhook" {
		return forEach(n, func(i int) error {
			patch := []byte(`{"metadata":{"annotations":{"argocd.argoproj.io/refresh":"normal"}}}`)
			app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: argocdNS, Name: appName(i)}}
			if err := c.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch)); err != nil {
				return fmt.Errorf("annotating Applications: %w", err)
			}
			return nil
		})
	}
	out, err := benchkit.PushWebhook(ctx, apiAddr, repoURL, webhookSecret)
	if err != nil {
		return err
	}
	if len(out.Apps) != n {
		return fmt.Errorf("push webhook refreshed %d apps, want %d", len(out.Apps), n)
	}
	return nil
}

// triggeredRound is one measured commit → all synced by a triggered refresh.
type triggeredRound struct {
	took              time.Duration
	cpu, apiserverCPU float64
}

// medianRound returns the round with the median duration (the later of the
// two middle ones for an even count).
func medianRound(rounds []triggeredRound) triggeredRound {
	sorted := append([]triggeredRound(nil), rounds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].took < sorted[j].took })
	return sorted[len(sorted)/2]
}
