package render

import (
	"context"
	"errors"
)

// renderHelm renders the chart in dir (absolute, inside req.Root).
// Placeholder until the Helm renderer lands in this issue.
func renderHelm(ctx context.Context, req Request, dir string) ([]Manifest, error) {
	return nil, errors.New("helm rendering is not implemented yet")
}
