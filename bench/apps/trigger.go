package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/api/v1alpha1"
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
	body, err := json.Marshal(map[string]any{
		"ref":        "refs/heads/master",
		"repository": map[string]any{"clone_url": repoURL, "default_branch": "master"},
	})
	if err != nil {
		return err
	}
	mac := hmac.New(sha256.New, []byte(webhookSecret))
	mac.Write(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+apiAddr+"/api/webhook", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("sending the push webhook: %w", err)
	}
	defer resp.Body.Close()
	var out struct {
		Refreshed []string `json:"refreshed"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Errorf("push webhook answered %s (%v)", resp.Status, err)
	}
	if len(out.Refreshed) != n {
		return fmt.Errorf("push webhook refreshed %d apps, want %d", len(out.Refreshed), n)
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
