// Command image builds Skiff's container image without a Docker engine.
//
// It cross-compiles ./cmd/skiff for linux/amd64 and linux/arm64 and
// assembles, on an empty base (there is no registry to pull one from), an
// image per platform: the binary at /usr/local/bin/skiff, the build
// machine's CA certificates, Go's time zone database (sync windows name time
// zones), /tmp, and a non-root user skiff (uid and gid 999) with its home. It
// writes
//
//   - an OCI image layout to <out>/oci holding one index of both platforms,
//     tagged <version> (org.opencontainers.image.ref.name), for crane and
//     skopeo to push;
//   - a `docker load`-able tarball per platform, <out>/skiff-linux-<arch>.tar,
//     tagged <repository>:<version> (docker load takes one platform per tag);
//
// and prints the index's digest. The same sources, version, commit,
// -source-date-epoch, CA certificates and Go toolchain give the same digest:
// the binaries are built with -trimpath, -buildvcs=false and an empty build ID, layers are
// written in a fixed order with fixed owners, and every timestamp (file
// times, the config's and the labels' creation time) is the given epoch.
//
// `make image` runs it with the Makefile's version, commit and build tags and
// the commit's time. With -rootfs it builds one platform and writes the
// image's root file system into a directory instead: the Dockerfile copies it
// onto scratch.
//
// Usage:
//
//	go run ./hack/image -version V -commit C -source-date-epoch SECONDS [-tags T] [-out DIR]
//	go run ./hack/image -version V -commit C -source-date-epoch SECONDS [-tags T] -rootfs DIR -platform linux/ARCH
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// options are the command's flags.
type options struct {
	spec     spec
	epoch    string
	tags     string
	out      string
	caCerts  string
	zoneInfo string
	rootfs   string
	platform string
}

func main() {
	var o options
	flag.StringVar(&o.spec.version, "version", "", "the image's version: linked into the binary, its tag and its version label (required)")
	flag.StringVar(&o.spec.commit, "commit", "", "the commit built, for `skiff version` and the revision label (required)")
	flag.StringVar(&o.epoch, "source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"), "creation time of the image and its files, in seconds since 1970 (default $SOURCE_DATE_EPOCH; required)")
	flag.StringVar(&o.spec.repository, "repository", defaultRepository, "the image's repository")
	flag.StringVar(&o.tags, "tags", "", "Go build tags (the Makefile's GO_TAGS)")
	flag.StringVar(&o.out, "out", "bin/image", "output directory")
	flag.StringVar(&o.caCerts, "ca-certificates", "/etc/ssl/certs/ca-certificates.crt", "the CA certificates bundle to put in the image")
	flag.StringVar(&o.zoneInfo, "zoneinfo", "", "Go's time zone database (default $(go env GOROOT)/lib/time/zoneinfo.zip)")
	flag.StringVar(&o.rootfs, "rootfs", "", "write the root file system of -platform's image into this new directory instead of the image")
	flag.StringVar(&o.platform, "platform", "", "with -rootfs: linux/amd64 or linux/arm64")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	s := o.spec
	var err error
	if s.created, err = parseEpoch(o.epoch); err != nil {
		return err
	}
	if err := s.validate(); err != nil {
		return err
	}
	if s.caCerts, err = os.ReadFile(o.caCerts); err != nil {
		return fmt.Errorf("reading the CA certificates: %w", err)
	}
	if o.zoneInfo == "" {
		if o.zoneInfo, err = goZoneInfo(ctx); err != nil {
			return err
		}
	}
	if s.zoneInfo, err = os.ReadFile(o.zoneInfo); err != nil {
		return fmt.Errorf("reading the time zone database: %w", err)
	}
	if o.rootfs != "" {
		return runRootfs(ctx, s, o)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	binaries, err := buildBinaries(ctx, s, o.tags, o.out)
	if err != nil {
		return err
	}
	digest, err := writeImage(s, binaries, o.out)
	if err != nil {
		return err
	}
	fmt.Printf("%s:%s\n  index %s\n  OCI layout %s\n", s.repository, s.version, digest, layoutDir(o.out))
	for _, b := range binaries {
		fmt.Printf("  docker load -i %s\n", tarballPath(o.out, b.platform))
	}
	return nil
}

// runRootfs builds o.platform's binary and writes its image's files into
// the new directory o.rootfs.
func runRootfs(ctx context.Context, s spec, o options) error {
	i := slices.IndexFunc(platforms, func(p v1.Platform) bool { return p.OS+"/"+p.Architecture == o.platform })
	if i < 0 {
		var names []string
		for _, p := range platforms {
			names = append(names, p.OS+"/"+p.Architecture)
		}
		return fmt.Errorf("-platform %q: want one of %s", o.platform, strings.Join(names, ", "))
	}
	if err := os.Mkdir(o.rootfs, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "skiff-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	b, err := buildBinary(ctx, s, o.tags, tmp, platforms[i])
	if err != nil {
		return err
	}
	return writeRootfs(s, b, o.rootfs)
}

// parseEpoch reads SOURCE_DATE_EPOCH's format: whole seconds since 1970, UTC.
func parseEpoch(epoch string) (time.Time, error) {
	seconds, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil || seconds < 0 {
		return time.Time{}, fmt.Errorf("-source-date-epoch (or $SOURCE_DATE_EPOCH) must be whole seconds since 1970, got %q", epoch)
	}
	return time.Unix(seconds, 0).UTC(), nil
}
