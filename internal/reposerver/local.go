package reposerver

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/skiffcd/skiff/internal/source"
	"github.com/skiffcd/skiff/internal/source/helmrepo"
)

// NewInDir returns a Server that caches git repositories under
// cacheDir/repos and Helm charts under cacheDir/charts, as `skiff server`,
// `skiff render` and `skiff app --core` all do; an empty cacheDir means
// DefaultCacheDir.
func NewInDir(cacheDir string, opts Options) (*Server, error) {
	if cacheDir == "" {
		var err error
		if cacheDir, err = DefaultCacheDir(); err != nil {
			return nil, err
		}
	}
	return New(
		source.NewCache(filepath.Join(cacheDir, "repos"), source.Options{}),
		helmrepo.New(filepath.Join(cacheDir, "charts"), nil),
		opts,
	), nil
}

// DefaultCacheDir is $XDG_CACHE_HOME/skiff, or the system's user cache
// directory's skiff.
func DefaultCacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding a cache directory: %w", err)
	}
	return filepath.Join(dir, "skiff"), nil
}
