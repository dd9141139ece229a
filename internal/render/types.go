// Package render turns a checked-out source directory into Kubernetes
// manifests, as Argo CD's repo server does: plain YAML/JSON directories (with
// Jsonnet), Kustomize and Helm, without external binaries. It never reads
// outside the checkout and bounds what a render may cost: the library calls
// that cannot be interrupted (Helm's template engine, krusty, go-jsonnet)
// run in worker processes that are killed at the deadline (see Pool).
package render

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// Request is one render of one source.
type Request struct {
	// Root is the checkout directory (a git tree, or an extracted chart). No
	// file outside it may be read.
	Root string
	// Path is the application directory relative to Root ("" or "." is Root).
	Path string
	// Source holds the renderer options (helm, kustomize, directory, plugin).
	Source v1alpha1.ApplicationSource
	// AppName is the Application's name: Helm's default release name.
	AppName string
	// Namespace is the destination namespace.
	Namespace string
	// KubeVersion (e.g. "v1.37.2") and APIVersions ("apps/v1", "argoproj.io/v1alpha1/Rollout")
	// describe the target cluster, for Helm capabilities.
	KubeVersion string
	APIVersions []string
	// RefRoots maps a source ref name ("values" for "$values/...") to the root
	// of that source's checkout, for multi-source Helm value files.
	RefRoots map[string]string
	// RemoteValueFiles holds the content of the Helm value files given by
	// URL, by URL, fetched by the caller (see FetchValueFile): a render
	// asks no network for them. A URL missing here is an error, or skipped
	// with ignoreMissingValueFiles (the caller found none there).
	RemoteValueFiles map[string][]byte
	// ImmutableRoot says Root never changes (a commit's checkout, a
	// downloaded chart): a worker may keep what it read of it for the
	// next render of the same root.
	ImmutableRoot bool
	// Limits bound the render; the zero value means DefaultLimits.
	Limits Limits
	// Kustomize are the kustomize build flags of every app (argocd-cm's
	// kustomize.buildOptions).
	Kustomize KustomizeOptions
	// FetchDependency downloads the Helm dependencies that a chart names
	// and charts/ lacks; it decides which repositories may be asked. Nil
	// refuses every such dependency.
	FetchDependency DependencyFetcher `json:"-"`
	// Workers runs the isolated steps; nil means DefaultPool().
	Workers *Pool `json:"-"`
}

// DependencyFetcher downloads version (a version or range) of chart from
// the HTTP Helm repository repoURL and returns the directory of the
// extracted chart, which must not be modified.
type DependencyFetcher func(ctx context.Context, repoURL, chart, version string) (dir string, err error)

// Manifest is one rendered object and the file it came from, relative to Root.
type Manifest struct {
	Object *unstructured.Unstructured
	File   string
}

// Limits bound what one render may read and produce.
type Limits struct {
	// MaxFileBytes is the largest file a renderer reads.
	MaxFileBytes int64
	// MaxFiles is the most files a directory render reads.
	MaxFiles int
	// MaxOutputBytes bounds the total size of the rendered manifests.
	MaxOutputBytes int64
	// Timeout bounds the render time.
	Timeout time.Duration
}

// DefaultLimits are generous for real applications and small enough that a
// hostile repository cannot exhaust the server.
var DefaultLimits = Limits{
	MaxFileBytes:   10 << 20,
	MaxFiles:       5000,
	MaxOutputBytes: 100 << 20,
	Timeout:        60 * time.Second,
}

// Kind is the renderer chosen for a source.
type Kind string

// Renderers, chosen like Argo CD chooses them.
const (
	KindDirectory Kind = "Directory"
	KindKustomize Kind = "Kustomize"
	KindHelm      Kind = "Helm"
	KindPlugin    Kind = "Plugin"
)
