// Package version reports which build of Skiff is running.
package version

import (
	"runtime/debug"
)

// Set at build time with -ldflags "-X github.com/skiffcd/skiff/internal/version.Version=…".
var (
	Version = "dev"
	Commit  = ""
)

// Info describes the running binary.
type Info struct {
	Version    string `json:"version"`
	Commit     string `json:"commit"`
	GoVersion  string `json:"goVersion"`
	KubeClient string `json:"kubernetesClient"`
}

// Get returns the build information, filling the commit and the client-go
// version from the module build info when the linker did not set them.
func Get() Info {
	info := Info{Version: Version, Commit: Commit, KubeClient: "unknown"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	info.GoVersion = bi.GoVersion
	for _, dep := range bi.Deps {
		if dep.Path == "k8s.io/client-go" {
			info.KubeClient = dep.Version
		}
	}
	if info.Commit == "" {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				info.Commit = s.Value
			}
		}
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	return info
}
