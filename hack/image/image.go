package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	defaultRepository = "ghcr.io/skiffcd/skiff"
	source            = "https://github.com/skiffcd/skiff"
	// The repository has no LICENSE file yet; SPDX's NOASSERTION says so
	// instead of guessing. Put the SPDX identifier here when it gets one.
	license = "NOASSERTION"

	versionPackage = "github.com/skiffcd/skiff/internal/version"
	mainPackage    = "github.com/skiffcd/skiff/cmd/skiff"

	// The image's user: not root, and numeric in the config so that
	// Kubernetes' runAsNonRoot can check it without reading /etc/passwd.
	uid, gid     = 999, 999
	userName     = "skiff"
	home         = "/home/skiff"
	binDir       = "/usr/local/bin"
	binPath      = binDir + "/skiff"
	zoneInfoPath = "/usr/share/zoneinfo.zip"
	caBundle     = "/etc/ssl/certs/ca-certificates.crt"
)

// platforms the image is built for, in the index's order.
var platforms = []v1.Platform{
	{OS: "linux", Architecture: "amd64"},
	{OS: "linux", Architecture: "arm64"},
}

// spec is everything that goes into the image besides the binaries.
type spec struct {
	repository string
	version    string
	commit     string
	created    time.Time
	caCerts    []byte
	zoneInfo   []byte
}

// validate refuses a spec whose version cannot be a tag or that lacks a
// commit, before minutes are spent compiling.
func (s spec) validate() error {
	if s.version == "" || s.commit == "" {
		return fmt.Errorf("-version and -commit are required")
	}
	if strings.ContainsAny(s.commit, " \t\n'\"") {
		return fmt.Errorf("the commit %q has blanks or quotes", s.commit)
	}
	if _, err := s.tag(); err != nil {
		return fmt.Errorf("the version %q cannot tag the image: %w", s.version, err)
	}
	return nil
}

func (s spec) tag() (name.Tag, error) {
	return name.NewTag(s.repository+":"+s.version, name.StrictValidation)
}

// labels are the image's OCI annotations, in its config and on the index.
func (s spec) labels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "skiff",
		"org.opencontainers.image.description": "GitOps continuous delivery and progressive delivery for Kubernetes, speaking Argo CD's and Argo Rollouts' API",
		"org.opencontainers.image.source":      source,
		"org.opencontainers.image.version":     s.version,
		"org.opencontainers.image.revision":    s.commit,
		"org.opencontainers.image.created":     s.created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.licenses":    license,
	}
}

// ldflags link the version and commit that `skiff version` prints, and an
// empty build ID so that the same sources give the same bytes.
func ldflags(version, commit string) string {
	return fmt.Sprintf("-X %s.Version=%s -X %s.Commit=%s -buildid=", versionPackage, version, versionPackage, commit)
}

// binary is skiff built for one platform.
type binary struct {
	platform v1.Platform
	path     string
}

func platformName(p v1.Platform) string { return p.OS + "-" + p.Architecture }

// buildBinaries cross-compiles cmd/skiff for every platform into dir.
func buildBinaries(ctx context.Context, s spec, tags, dir string) ([]binary, error) {
	var out []binary
	for _, p := range platforms {
		b, err := buildBinary(ctx, s, tags, dir, p)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// buildBinary compiles cmd/skiff for p into dir, static (CGO_ENABLED=0) and
// reproducible (-trimpath, empty build ID, and no VCS stamp: in a git
// checkout the go command would stamp the commit time and whether the tree
// is modified, so a release tarball or a copy would build another binary;
// the commit is in the linker flags).
func buildBinary(ctx context.Context, s spec, tags, dir string, p v1.Platform) (binary, error) {
	path := filepath.Join(dir, "skiff-"+platformName(p))
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags(s.version, s.commit), "-o", path}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, mainPackage)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return binary{}, fmt.Errorf("building skiff for %s: %w\n%s", platformName(p), err, msg)
	}
	return binary{platform: p, path: path}, nil
}

// goZoneInfo is the time zone database of the Go toolchain on PATH.
func goZoneInfo(ctx context.Context) (string, error) {
	goroot, err := exec.CommandContext(ctx, "go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOROOT: %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(goroot)), "lib", "time", "zoneinfo.zip"), nil
}

// file is one entry of a layer: a directory when content is nil and the
// mode says so.
type file struct {
	path     string // absolute, in the image
	mode     int64  // permission bits, with the sticky bit where wanted
	dir      bool
	uid, gid int
	content  []byte
}

// baseFiles are what the binary needs around it, the same on every
// platform: the user, name resolution as glibc's default, CA certificates
// for git and Helm over HTTPS, time zones for sync windows, a writable /tmp
// and the user's home (its cache when the root file system is read-only and
// nothing is mounted there).
func baseFiles(caCerts, zoneInfoZip []byte) []file {
	root := func(path string) file { return file{path: path, mode: 0o755, dir: true} }
	text := func(path, content string) file {
		return file{path: path, mode: 0o644, content: []byte(content)}
	}
	return []file{
		root("/etc"),
		text("/etc/passwd", fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:%s:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n",
			userName, uid, gid, userName, home)),
		text("/etc/group", fmt.Sprintf("root:x:0:\n%s:x:%d:\nnobody:x:65534:\n", userName, gid)),
		text("/etc/nsswitch.conf", "hosts: files dns\n"),
		root("/etc/ssl"),
		root("/etc/ssl/certs"),
		{path: caBundle, mode: 0o644, content: caCerts},
		root("/home"),
		{path: home, mode: 0o755, dir: true, uid: uid, gid: gid},
		{path: "/tmp", mode: 0o1777, dir: true},
		root("/usr"),
		root("/usr/share"),
		{path: zoneInfoPath, mode: 0o644, content: zoneInfoZip},
	}
}

// fileMode is f's mode as the os package spells it.
func (f file) fileMode() os.FileMode {
	mode := os.FileMode(f.mode & 0o777)
	if f.mode&0o1000 != 0 {
		mode |= os.ModeSticky
	}
	if f.dir {
		mode |= os.ModeDir
	}
	return mode
}

// binaryFiles put skiff on the PATH.
func binaryFiles(skiff []byte) []file {
	return []file{
		{path: "/usr", mode: 0o755, dir: true},
		{path: "/usr/local", mode: 0o755, dir: true},
		{path: binDir, mode: 0o755, dir: true},
		{path: binPath, mode: 0o755, content: skiff},
	}
}

// layer writes files, in their order, as a gzipped tar with every time set
// to mtime and no owner names, so the same files give the same digest.
func layer(files []file, mtime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	for _, f := range files {
		h := &tar.Header{
			Name:    strings.TrimPrefix(f.path, "/"),
			Mode:    f.mode,
			Uid:     f.uid,
			Gid:     f.gid,
			ModTime: mtime,
			Format:  tar.FormatPAX,
		}
		if f.dir {
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.content))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.content); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	compressed := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(compressed)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// config is the image's run configuration for one platform.
func (s spec) config() v1.Config {
	return v1.Config{
		User:       fmt.Sprintf("%d:%d", uid, gid),
		Entrypoint: []string{binPath},
		// `docker run IMAGE` serves; any other arguments replace it
		// (`docker run IMAGE version`), as the install manifests' args do.
		Cmd:        []string{"server"},
		WorkingDir: home,
		Env: []string{
			"PATH=" + binDir,
			"HOME=" + home,
			// Without it Go looks for /usr/share/zoneinfo, which the image
			// does not have.
			"ZONEINFO=" + zoneInfoPath,
		},
		Labels: s.labels(),
	}
}

// assemble builds the index of one image per binary on an empty base: a
// layer of baseFiles shared by every platform, then the binary's layer.
func assemble(s spec, binaries []binary) (v1.ImageIndex, error) {
	base, err := layer(baseFiles(s.caCerts, s.zoneInfo), s.created)
	if err != nil {
		return nil, fmt.Errorf("base layer: %w", err)
	}
	index := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, b := range binaries {
		img, err := s.image(base, b)
		if err != nil {
			return nil, fmt.Errorf("image for %s: %w", platformName(b.platform), err)
		}
		p := b.platform
		index = mutate.AppendManifests(index, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &p},
		})
	}
	return mutate.Annotations(index, s.labels()).(v1.ImageIndex), nil
}

func (s spec) image(base v1.Layer, b binary) (v1.Image, error) {
	skiff, err := os.ReadFile(b.path)
	if err != nil {
		return nil, err
	}
	bin, err := layer(binaryFiles(skiff), s.created)
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	created := v1.Time{Time: s.created}
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, History: v1.History{Created: created, CreatedBy: "hack/image: users, CA certificates, time zones, /tmp, " + home}},
		mutate.Addendum{Layer: bin, History: v1.History{Created: created, CreatedBy: "hack/image: " + binPath}},
	)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = b.platform.OS, b.platform.Architecture
	cf.Created = created
	cf.Config = s.config()
	return mutate.ConfigFile(img, cf)
}

// writeRootfs writes into dir the files the image's layers hold for b, with
// their modes, times and (as root) owners: the Dockerfile builds its image by
// copying them onto scratch, so both images have the same root file system.
func writeRootfs(s spec, b binary, dir string) error {
	skiff, err := os.ReadFile(b.path)
	if err != nil {
		return err
	}
	files := append(baseFiles(s.caCerts, s.zoneInfo), binaryFiles(skiff)...)
	for _, f := range files {
		target := filepath.Join(dir, f.path)
		if f.dir {
			err = os.MkdirAll(target, 0o755)
		} else {
			err = os.WriteFile(target, f.content, 0o600)
		}
		if err == nil && os.Geteuid() == 0 {
			err = os.Lchown(target, f.uid, f.gid)
		}
		if err == nil {
			err = os.Chmod(target, f.fileMode())
		}
		if err != nil {
			return err
		}
	}
	// Times last, children first: writing into a directory changes its time.
	for _, f := range slices.Backward(files) {
		if err := os.Chtimes(filepath.Join(dir, f.path), s.created, s.created); err != nil {
			return err
		}
	}
	return nil
}

func layoutDir(out string) string { return filepath.Join(out, "oci") }

func tarballPath(out string, p v1.Platform) string {
	return filepath.Join(out, "skiff-"+platformName(p)+".tar")
}

// writeImage assembles the image and writes the OCI layout and the docker
// tarballs under out, replacing earlier ones, and returns the index digest.
func writeImage(s spec, binaries []binary, out string) (v1.Hash, error) {
	tag, err := s.tag()
	if err != nil {
		return v1.Hash{}, err
	}
	index, err := assemble(s, binaries)
	if err != nil {
		return v1.Hash{}, err
	}
	digest, err := index.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	// A layout only gains blobs; start afresh so that it holds this build only.
	if err := os.RemoveAll(layoutDir(out)); err != nil {
		return v1.Hash{}, err
	}
	oci, err := layout.Write(layoutDir(out), empty.Index)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("OCI layout: %w", err)
	}
	if err := oci.AppendIndex(index, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": s.version,
		"io.containerd.image.name":          tag.String(),
	})); err != nil {
		return v1.Hash{}, fmt.Errorf("OCI layout: %w", err)
	}
	manifest, err := index.IndexManifest()
	if err != nil {
		return v1.Hash{}, err
	}
	for _, desc := range manifest.Manifests {
		img, err := index.Image(desc.Digest)
		if err != nil {
			return v1.Hash{}, err
		}
		if err := tarball.WriteToFile(tarballPath(out, *desc.Platform), tag, img); err != nil {
			return v1.Hash{}, fmt.Errorf("docker tarball for %s: %w", platformName(*desc.Platform), err)
		}
	}
	return digest, nil
}
