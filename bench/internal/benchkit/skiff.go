package benchkit

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// WaitReadyz waits, at most limit, for skiff server's /readyz at
// healthAddr, checking every every; alive (optional) ends it early.
func WaitReadyz(ctx context.Context, healthAddr string, limit, every time.Duration, alive func() error) error {
	return WaitFor(ctx, "skiff server /readyz", limit, every, alive, func() error {
		resp, err := http.Get("http://" + healthAddr + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errors.New(resp.Status)
		}
		return nil
	})
}

// Refreshed is skiff's answer to a push webhook.
type Refreshed struct {
	Apps []string `json:"refreshed"`
	Sets []string `json:"refreshedApplicationSets"`
}

// PushWebhook sends skiff's API at apiAddr a GitHub push event of
// repoURL's master signed with secret (argocd-secret's
// webhook.github.secret) and returns what skiff refreshed.
func PushWebhook(ctx context.Context, apiAddr, repoURL, secret string) (Refreshed, error) {
	var out Refreshed
	body, err := json.Marshal(map[string]any{
		"ref":        "refs/heads/master",
		"repository": map[string]any{"clone_url": repoURL, "default_branch": "master"},
	})
	if err != nil {
		return out, err
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+apiAddr+"/api/webhook", bytes.NewReader(body))
	if err != nil {
		return out, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return out, fmt.Errorf("sending the push webhook: %w", err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		return out, fmt.Errorf("push webhook answered %s (%v)", resp.Status, err)
	}
	return out, nil
}
