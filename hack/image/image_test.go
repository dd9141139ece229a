package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/skiffcd/skiff/internal/version"
)

// The cross builds are the slow part (minutes on a cold cache): the
// binaries are built once per test run, in testDir, and every test assembles
// images from them.
var (
	testDir     string
	buildOnce   sync.Once
	builtBins   []binary
	buildErr    error
	writtenOnce sync.Once
	written     string
	writtenHash v1.Hash
	writeErr    error
)

func TestMain(m *testing.M) {
	var err error
	if testDir, err = os.MkdirTemp("", "skiff-image-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(testDir)
	os.Exit(code)
}

// testSpec is what `make image` would be given, with the build machine's CA
// certificates and Go's time zones.
func testSpec(t *testing.T) spec {
	t.Helper()
	ca, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		t.Fatalf("the image takes the build machine's CA certificates: %v", err)
	}
	zi, err := goZoneInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	zoneInfo, err := os.ReadFile(zi)
	if err != nil {
		t.Fatal(err)
	}
	return spec{
		repository: defaultRepository,
		version:    "v0.0.0-imagetest",
		commit:     "0123456789abcdef0123456789abcdef01234567",
		created:    time.Unix(1_700_000_000, 0).UTC(),
		caCerts:    ca,
		zoneInfo:   zoneInfo,
	}
}

// testBinaries builds skiff for both platforms once, with testSpec's version.
func testBinaries(t *testing.T) []binary {
	t.Helper()
	s := testSpec(t)
	buildOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		// The tags come from GOFLAGS, as for every build the tests make.
		builtBins, buildErr = buildBinaries(ctx, s, "", testDir)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBins
}

// testImage writes testSpec's image once and returns its output directory
// and index digest.
func testImage(t *testing.T) (string, v1.Hash) {
	t.Helper()
	s, bins := testSpec(t), testBinaries(t)
	writtenOnce.Do(func() {
		written = filepath.Join(testDir, "out")
		writtenHash, writeErr = writeImage(s, bins, written)
	})
	if writeErr != nil {
		t.Fatal(writeErr)
	}
	return written, writtenHash
}

// readLayout reads the image index back from the OCI layout under out, as
// crane or skopeo would: index.json names one index, tagged with the version.
func readLayout(t *testing.T, out string) (v1.ImageIndex, v1.Descriptor) {
	t.Helper()
	outer, err := layout.ImageIndexFromPath(layoutDir(out))
	if err != nil {
		t.Fatal(err)
	}
	m, err := outer.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 {
		t.Fatalf("index.json names %d manifests, want the one index", len(m.Manifests))
	}
	index, err := outer.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return index, m.Manifests[0]
}

// platformImages maps each platform of index, as os/architecture, to its image.
func platformImages(t *testing.T, index v1.ImageIndex) map[string]v1.Image {
	t.Helper()
	m, err := index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]v1.Image{}
	for _, desc := range m.Manifests {
		if desc.Platform == nil {
			t.Fatalf("manifest %s has no platform", desc.Digest)
		}
		img, err := index.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		out[desc.Platform.OS+"/"+desc.Platform.Architecture] = img
	}
	return out
}

func configOf(t *testing.T, img v1.Image) *v1.ConfigFile {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	return cf
}

func TestTheLayoutHoldsBothPlatformsWithTheUserEntrypointAndLabels(t *testing.T) {
	s := testSpec(t)
	out, digest := testImage(t)
	index, desc := readLayout(t, out)

	if desc.Digest != digest {
		t.Errorf("index.json names %s, the build printed %s", desc.Digest, digest)
	}
	if got := desc.Annotations["org.opencontainers.image.ref.name"]; got != s.version {
		t.Errorf("ref.name = %q, want the version %q (skopeo's oci:DIR:TAG)", got, s.version)
	}
	if mt, _ := index.MediaType(); mt != types.OCIImageIndex {
		t.Errorf("index media type %s, want %s", mt, types.OCIImageIndex)
	}
	im, err := index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s.labels(), im.Annotations); diff != "" {
		t.Errorf("index annotations (-want +got):\n%s", diff)
	}

	images := platformImages(t, index)
	if got := slices.Sorted(maps.Keys(images)); !slices.Equal(got, []string{"linux/amd64", "linux/arm64"}) {
		t.Fatalf("platforms %v, want linux/amd64 and linux/arm64", got)
	}
	for platform, img := range images {
		t.Run(platform, func(t *testing.T) {
			cf := configOf(t, img)
			if got := cf.OS + "/" + cf.Architecture; got != platform {
				t.Errorf("config says %s, the index %s", got, platform)
			}
			if !cf.Created.Time.Equal(s.created) {
				t.Errorf("created %v, want the source date %v", cf.Created.Time, s.created)
			}
			want := v1.Config{
				User:       "999:999",
				Entrypoint: []string{"/usr/local/bin/skiff"},
				Cmd:        []string{"server"},
				WorkingDir: "/home/skiff",
				Env:        []string{"PATH=/usr/local/bin", "HOME=/home/skiff", "ZONEINFO=/usr/share/zoneinfo.zip"},
				Labels: map[string]string{
					"org.opencontainers.image.title":       "skiff",
					"org.opencontainers.image.description": s.labels()["org.opencontainers.image.description"],
					"org.opencontainers.image.source":      "https://github.com/skiffcd/skiff",
					"org.opencontainers.image.version":     "v0.0.0-imagetest",
					"org.opencontainers.image.revision":    "0123456789abcdef0123456789abcdef01234567",
					"org.opencontainers.image.created":     "2023-11-14T22:13:20Z",
					"org.opencontainers.image.licenses":    license,
				},
			}
			if diff := cmp.Diff(want, cf.Config); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			m, err := img.Manifest()
			if err != nil {
				t.Fatal(err)
			}
			if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON {
				t.Errorf("manifest %s with config %s, want OCI media types", m.MediaType, m.Config.MediaType)
			}
			if len(m.Layers) != 2 {
				t.Fatalf("%d layers, want the base and the binary", len(m.Layers))
			}
			for _, l := range m.Layers {
				if l.MediaType != types.OCILayer {
					t.Errorf("layer media type %s, want %s", l.MediaType, types.OCILayer)
				}
			}
		})
	}
	// The base layer is the same on both platforms, so a registry stores it once.
	amd, arm := layerDigests(t, images["linux/amd64"]), layerDigests(t, images["linux/arm64"])
	if amd[0] != arm[0] {
		t.Errorf("base layers differ: %s and %s", amd[0], arm[0])
	}
	if amd[1] == arm[1] {
		t.Errorf("both platforms have the same binary layer %s", amd[1])
	}
}

func layerDigests(t *testing.T, img v1.Image) []v1.Hash {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var out []v1.Hash
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// hostImage is the image of the platform this test runs on.
func hostImage(t *testing.T, images map[string]v1.Image) v1.Image {
	t.Helper()
	img, ok := images[runtime.GOOS+"/"+runtime.GOARCH]
	if !ok {
		t.Fatalf("the image has no %s/%s platform to run here; it has linux/amd64 and linux/arm64", runtime.GOOS, runtime.GOARCH)
	}
	return img
}

// unpack applies img's layers in order into a new directory (go-containerregistry's
// Extract flattens them, honouring whiteouts) and returns it. Owners are kept
// when the test runs as root.
func unpack(t *testing.T, img v1.Image) string {
	t.Helper()
	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Clean("/" + h.Name)
		if name == "/" {
			continue
		}
		target := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := h.FileInfo().Mode()
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("%s: unexpected tar entry type %q", h.Name, h.Typeflag)
		}
		if os.Geteuid() == 0 {
			if err := os.Lchown(target, h.Uid, h.Gid); err != nil {
				t.Fatal(err)
			}
		}
		// After chown, which clears set-id bits.
		if err := os.Chmod(target, mode); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// runVersion runs `skiff version -o json` as cmd sets it up and decodes it.
func runVersion(t *testing.T, cmd *exec.Cmd) version.Info {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, stderr.String())
	}
	var info version.Info
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatalf("skiff version -o json printed %q: %v", out, err)
	}
	return info
}

func TestTheImageRunsItsEntrypointFromItsOwnRootFileSystem(t *testing.T) {
	out, _ := testImage(t)
	index, _ := readLayout(t, out)
	img := hostImage(t, platformImages(t, index))
	cf := configOf(t, img)
	root := unpack(t, img)
	entrypoint := cf.Config.Entrypoint[0]
	args := []string{entrypoint, "version", "-o", "json"}
	wantVersion := cf.Config.Labels["org.opencontainers.image.version"]
	wantCommit := cf.Config.Labels["org.opencontainers.image.revision"]
	check := func(t *testing.T, info version.Info) {
		if info.Version != wantVersion || info.Commit != wantCommit {
			t.Errorf("skiff version says %s at %s; the labels say %s at %s", info.Version, info.Commit, wantVersion, wantCommit)
		}
	}

	t.Run("the entrypoint prints the version of the labels", func(t *testing.T) {
		cmd := exec.Command(filepath.Join(root, entrypoint), args[1:]...)
		cmd.Env = cf.Config.Env
		check(t, runVersion(t, cmd))
	})

	t.Run("it runs chrooted in the rootfs as the image's user", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("chroot needs root; the run above used the rootfs's binary from outside")
		}
		uidText, gidText, ok := strings.Cut(cf.Config.User, ":")
		if !ok {
			t.Fatalf("user %q is not uid:gid", cf.Config.User)
		}
		uid, err1 := strconv.ParseUint(uidText, 10, 32)
		gid, err2 := strconv.ParseUint(gidText, 10, 32)
		if err := errors.Join(err1, err2); err != nil {
			t.Fatalf("user %q: %v", cf.Config.User, err)
		}
		cmd := &exec.Cmd{
			Path: entrypoint, Args: args, Env: cf.Config.Env, Dir: cf.Config.WorkingDir,
			SysProcAttr: &syscall.SysProcAttr{
				Chroot:     root,
				Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)},
			},
		}
		check(t, runVersion(t, cmd))
	})

	t.Run("the rootfs has what the binary needs", func(t *testing.T) {
		read := func(path string) []byte {
			b, err := os.ReadFile(filepath.Join(root, path))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		if !strings.Contains(string(read("/etc/passwd")), "\nskiff:x:999:999:skiff:/home/skiff:") {
			t.Errorf("/etc/passwd has no skiff 999:999 with home /home/skiff:\n%s", read("/etc/passwd"))
		}
		if !strings.Contains(string(read("/etc/group")), "\nskiff:x:999:") {
			t.Errorf("/etc/group has no skiff 999:\n%s", read("/etc/group"))
		}
		if n := countCertificates(t, read("/etc/ssl/certs/ca-certificates.crt")); n == 0 {
			t.Error("the CA bundle holds no certificate")
		}
		zoneinfo := envValue(cf.Config.Env, "ZONEINFO")
		if zoneinfo == "" {
			t.Fatal("the config sets no ZONEINFO")
		}
		if _, err := loadZone(read(zoneinfo), "Europe/Berlin"); err != nil {
			t.Errorf("$ZONEINFO %s: %v", zoneinfo, err)
		}
		for path, want := range map[string]os.FileMode{
			"/tmp":                 os.ModeDir | os.ModeSticky | 0o777,
			"/home/skiff":          os.ModeDir | 0o755,
			"/usr/local/bin/skiff": 0o755,
		} {
			fi, err := os.Stat(filepath.Join(root, path))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != want {
				t.Errorf("%s has mode %v, want %v", path, fi.Mode(), want)
			}
		}
		if os.Geteuid() == 0 {
			fi, err := os.Stat(filepath.Join(root, "/home/skiff"))
			if err != nil {
				t.Fatal(err)
			}
			if st := fi.Sys().(*syscall.Stat_t); st.Uid != 999 || st.Gid != 999 {
				t.Errorf("/home/skiff is owned by %d:%d, want the user 999:999", st.Uid, st.Gid)
			}
		}
	})
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

func countCertificates(t *testing.T, bundle []byte) int {
	t.Helper()
	n := 0
	for {
		var block *pem.Block
		block, bundle = pem.Decode(bundle)
		if block == nil {
			return n
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			t.Errorf("a certificate of the bundle does not parse: %v", err)
		}
		n++
	}
}

// loadZone reads one zone from a time zone zip as Go reads $ZONEINFO.
func loadZone(zipped []byte, name string) (*time.Location, error) {
	zr, err := zip.NewReader(bytes.NewReader(zipped), int64(len(zipped)))
	if err != nil {
		return nil, err
	}
	f, err := zr.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	return time.LoadLocationFromTZData(name, data)
}

func TestTheSameInputsGiveTheSameDigest(t *testing.T) {
	base := testSpec(t)
	bins := testBinaries(t)
	_, want := testImage(t)
	for name, tc := range map[string]struct {
		change   func(*spec)
		wantSame bool
	}{
		"another build of the same inputs has the same digest": {change: func(*spec) {}, wantSame: true},
		"another version has another digest":                   {change: func(s *spec) { s.version = "v0.0.0-other" }},
		"another source date has another digest":               {change: func(s *spec) { s.created = s.created.Add(time.Second) }},
	} {
		t.Run(name, func(t *testing.T) {
			s := base
			tc.change(&s)
			got, err := writeImage(s, bins, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if (got == want) != tc.wantSame {
				t.Errorf("digest %s, first build %s; want same = %v", got, want, tc.wantSame)
			}
		})
	}
}

// -trimpath keeps the checkout's path out of the binary: a checkout
// elsewhere builds the same bytes.
func TestAnotherCheckoutBuildsTheSameBinary(t *testing.T) {
	bins := testBinaries(t)
	first := bins[slices.IndexFunc(bins, func(b binary) bool { return b.platform.Architecture == "amd64" })]
	elsewhere := copyCheckout(t)
	t.Chdir(elsewhere)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	again, err := buildBinary(ctx, testSpec(t), "", t.TempDir(), first.platform)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := fileSum(t, first.path), fileSum(t, again.path); a != b {
		t.Errorf("the builds in %s and in this checkout differ: %x and %x", elsewhere, b, a)
	}
}

// copyCheckout copies the module's files that git tracks or would track
// (the working tree as it is, not the last commit) into a new directory.
func copyCheckout(t *testing.T) string {
	t.Helper()
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	src := strings.TrimSpace(string(top))
	list := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	list.Dir = src
	names, err := list.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dst := t.TempDir()
	for _, name := range strings.Split(strings.TrimRight(string(names), "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join(src, name))
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(target, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestTheDockerTarballsHoldTheLayoutsImages(t *testing.T) {
	s := testSpec(t)
	out, _ := testImage(t)
	index, _ := readLayout(t, out)
	tag, err := s.tag()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range platforms {
		platform := p.OS + "/" + p.Architecture
		t.Run(platform, func(t *testing.T) {
			// docker load reads manifest.json, the config and the layers.
			loaded, err := tarball.ImageFromPath(tarballPath(out, p), &tag)
			if err != nil {
				t.Fatal(err)
			}
			want := platformImages(t, index)[platform]
			wantConfig, err := want.ConfigName()
			if err != nil {
				t.Fatal(err)
			}
			gotConfig, err := loaded.ConfigName()
			if err != nil {
				t.Fatal(err)
			}
			// The config digest is the image ID docker shows.
			if gotConfig != wantConfig {
				t.Errorf("tarball's config %s, layout's %s", gotConfig, wantConfig)
			}
			if diff := cmp.Diff(layerDigests(t, want), layerDigests(t, loaded)); diff != "" {
				t.Errorf("layers (-layout +tarball):\n%s", diff)
			}
			if got := configOf(t, loaded).Architecture; got != p.Architecture {
				t.Errorf("tarball for %s holds an %s image", platform, got)
			}
		})
	}
}

func TestASpecIsRefusedBeforeBuilding(t *testing.T) {
	valid := spec{repository: defaultRepository, version: "v1.2.3", commit: "abc123"}
	for name, tc := range map[string]struct {
		change  func(*spec)
		wantErr string
	}{
		"a release version and a commit are accepted":       {change: func(*spec) {}},
		"git describe's dirty version is accepted":          {change: func(s *spec) { s.version = "v1.2.3-4-gabc123-dirty" }},
		"a missing version is refused":                      {change: func(s *spec) { s.version = "" }, wantErr: "required"},
		"a missing commit is refused":                       {change: func(s *spec) { s.commit = "" }, wantErr: "required"},
		"a version that cannot be a tag is refused":         {change: func(s *spec) { s.version = "feature/x" }, wantErr: "cannot tag the image"},
		"a commit with a blank would split the ldflags":     {change: func(s *spec) { s.commit = "abc -X evil" }, wantErr: "blanks or quotes"},
		"a commit with a quote would break the ldflags too": {change: func(s *spec) { s.commit = `abc"` }, wantErr: "blanks or quotes"},
	} {
		t.Run(name, func(t *testing.T) {
			s := valid
			tc.change(&s)
			err := s.validate()
			if tc.wantErr == "" && err != nil {
				t.Errorf("refused: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("got %v, want an error with %q", err, tc.wantErr)
			}
		})
	}
}

func TestParseEpochReadsSourceDateEpoch(t *testing.T) {
	for name, tc := range map[string]struct {
		epoch   string
		want    time.Time
		wantErr bool
	}{
		"seconds since 1970 are a UTC time": {epoch: "1700000000", want: time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC)},
		"zero is 1970":                      {epoch: "0", want: time.Unix(0, 0).UTC()},
		"an unset epoch is an error":        {epoch: "", wantErr: true},
		"a date is not seconds":             {epoch: "2023-11-14", wantErr: true},
		"a negative epoch is refused":       {epoch: "-1", wantErr: true},
		"fractional seconds are refused":    {epoch: "1.5", wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := parseEpoch(tc.epoch)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error = %v", err, tc.wantErr)
			}
			if !got.Equal(tc.want) || (err == nil && got.Location() != time.UTC) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTheDockerfilesRootfsIsTheImagesRootfs(t *testing.T) {
	s := testSpec(t)
	out, _ := testImage(t)
	index, _ := readLayout(t, out)
	img := hostImage(t, platformImages(t, index))
	bins := testBinaries(t)
	host := bins[slices.IndexFunc(bins, func(b binary) bool { return b.platform.Architecture == runtime.GOARCH })]
	rootfs := filepath.Join(t.TempDir(), "rootfs")
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeRootfs(s, host, rootfs); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(describeTree(t, unpack(t, img)), describeTree(t, rootfs)); diff != "" {
		t.Errorf("root file systems (-image +rootfs for the Dockerfile):\n%s", diff)
	}
	fi, err := os.Stat(filepath.Join(rootfs, "usr", "local", "bin"))
	if err != nil {
		t.Fatal(err)
	}
	if !fi.ModTime().Equal(s.created) {
		t.Errorf("/usr/local/bin's time %v, want the source date %v", fi.ModTime(), s.created)
	}
}

// describeTree lists every file under root with its mode, owner and a hash
// of its content.
func describeTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || path == root {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		desc := fmt.Sprintf("%v %d:%d", fi.Mode(), st.Uid, st.Gid)
		if fi.Mode().IsRegular() {
			desc += fmt.Sprintf(" %x", fileSum(t, path))
		}
		out[strings.TrimPrefix(path, root)] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The Dockerfile cannot be built here (no Docker engine); what can drift
// from hack/image is compared: its final stage's configuration and build tags.
func TestTheDockerfileConfiguresTheImageAsHackImageDoes(t *testing.T) {
	dockerfile, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	got, runs := dockerfileConfig(t, string(dockerfile))
	want := spec{version: "$VERSION", commit: "$COMMIT"}.config()
	// BuildKit sets the creation time from SOURCE_DATE_EPOCH; a LABEL cannot.
	delete(want.Labels, "org.opencontainers.image.created")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the Dockerfile's configuration (-hack/image +Dockerfile):\n%s", diff)
	}

	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	tags := regexp.MustCompile(`(?m)^GO_TAGS := (.+)$`).FindSubmatch(makefile)
	if tags == nil {
		t.Fatal("the Makefile sets no GO_TAGS")
	}
	if !slices.ContainsFunc(runs, func(run string) bool {
		return strings.Contains(run, "./hack/image") && strings.Contains(run, "-tags "+strings.TrimSpace(string(tags[1])))
	}) {
		t.Errorf("no RUN of the build stage runs hack/image with the Makefile's tags %s:\n%s", tags[1], strings.Join(runs, "\n"))
	}
}

// dockerfileConfig reads the image configuration the Dockerfile's last
// stage sets, and the RUN commands of every stage.
func dockerfileConfig(t *testing.T, dockerfile string) (v1.Config, []string) {
	t.Helper()
	var cfg v1.Config
	var runs []string
	joined := strings.ReplaceAll(dockerfile, "\\\n", " ")
	for _, line := range strings.Split(joined, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		instruction, args, _ := strings.Cut(line, " ")
		args = strings.TrimSpace(args)
		switch strings.ToUpper(instruction) {
		case "FROM":
			cfg = v1.Config{}
		case "RUN":
			runs = append(runs, strings.Join(strings.Fields(args), " "))
		case "USER":
			cfg.User = args
		case "WORKDIR":
			cfg.WorkingDir = args
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(args), &cfg.Entrypoint); err != nil {
				t.Fatalf("ENTRYPOINT %s: %v", args, err)
			}
		case "CMD":
			if err := json.Unmarshal([]byte(args), &cfg.Cmd); err != nil {
				t.Fatalf("CMD %s: %v", args, err)
			}
		case "ENV":
			cfg.Env = append(cfg.Env, quotedWords(args)...)
		case "LABEL":
			for _, kv := range quotedWords(args) {
				k, v, _ := strings.Cut(kv, "=")
				if cfg.Labels == nil {
					cfg.Labels = map[string]string{}
				}
				cfg.Labels[k] = v
			}
		}
	}
	return cfg, runs
}

// quotedWords splits s at blanks outside double quotes and drops the quotes.
func quotedWords(s string) []string {
	var words []string
	var word strings.Builder
	quoted, inWord := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, word.String())
				word.Reset()
			}
			inWord = false
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words
}

// unpack is what proves the rootfs self-sufficient; it must see what a
// container runtime sees.
func TestUnpackAppliesLayersInOrderAndHonoursWhiteouts(t *testing.T) {
	mtime := time.Unix(1_700_000_000, 0)
	lower, err := layer([]file{
		{path: "/etc", mode: 0o755, dir: true},
		{path: "/etc/gone", mode: 0o644, content: []byte("removed by the upper layer")},
		{path: "/etc/kept", mode: 0o644, content: []byte("lower")},
		{path: "/etc/replaced", mode: 0o644, content: []byte("lower")},
	}, mtime)
	if err != nil {
		t.Fatal(err)
	}
	upper, err := layer([]file{
		{path: "/etc", mode: 0o755, dir: true},
		{path: "/etc/.wh.gone", mode: 0o644},
		{path: "/etc/replaced", mode: 0o600, content: []byte("upper")},
	}, mtime)
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, lower, upper)
	if err != nil {
		t.Fatal(err)
	}
	root := unpack(t, img)
	got := map[string]string{}
	for _, name := range []string{"gone", "kept", "replaced"} {
		b, err := os.ReadFile(filepath.Join(root, "etc", name))
		switch {
		case errors.Is(err, os.ErrNotExist):
			got[name] = "absent"
		case err != nil:
			t.Fatal(err)
		default:
			got[name] = string(b)
		}
	}
	want := map[string]string{"gone": "absent", "kept": "lower", "replaced": "upper"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unpacked files (-want +got):\n%s", diff)
	}
}
